package aws

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/pricing"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/prometheus/client_golang/prometheus"

	awscloud "github.com/capstan-dev/capstan/pkg/cloudprovider/aws"
)

// clients are the AWS APIs the provider calls, sharing one HTTP client
// and one set of API metrics.
type clients struct {
	ec2     *ec2.Client
	pricing *pricing.Client
	sqs     *sqs.Client
	// iam makes the instance profiles of EC2NodeClasses with spec.role.
	iam *iam.Client
	// eks says what nodes join, where the flags do not.
	eks *eks.Client
}

// newClients builds the clients for cfg, each at its endpoint flag when
// set, their calls measured on reg.
func newClients(cfg aws.Config, o Options, reg prometheus.Registerer) (clients, error) {
	apiMetrics, err := awscloud.NewAPIMetrics(reg)
	if err != nil {
		return clients{}, err
	}
	httpClient := awscloud.NewHTTPClient()
	return clients{
		ec2: ec2.NewFromConfig(cfg, func(eo *ec2.Options) {
			eo.HTTPClient = httpClient
			eo.APIOptions = append(eo.APIOptions, apiMetrics.Middleware)
			if o.Endpoint != "" {
				eo.BaseEndpoint = &o.Endpoint
			}
		}),
		// The Price List API answers in us-east-1 for every region.
		pricing: pricing.NewFromConfig(cfg, func(po *pricing.Options) {
			po.Region, po.HTTPClient = "us-east-1", httpClient
			po.APIOptions = append(po.APIOptions, apiMetrics.Middleware)
			if o.PricingEndpoint != "" {
				po.BaseEndpoint = &o.PricingEndpoint
			}
		}),
		sqs: sqs.NewFromConfig(cfg, func(so *sqs.Options) {
			so.HTTPClient = httpClient
			so.APIOptions = append(so.APIOptions, apiMetrics.Middleware)
			if o.SQSEndpoint != "" {
				so.BaseEndpoint = &o.SQSEndpoint
			}
		}),
		iam: iam.NewFromConfig(cfg, func(io *iam.Options) {
			io.HTTPClient = httpClient
			io.APIOptions = append(io.APIOptions, apiMetrics.Middleware)
			if o.IAMEndpoint != "" {
				io.BaseEndpoint = &o.IAMEndpoint
			}
		}),
		eks: eks.NewFromConfig(cfg, func(eo *eks.Options) {
			eo.HTTPClient = httpClient
			eo.APIOptions = append(eo.APIOptions, apiMetrics.Middleware)
			if o.EKSEndpoint != "" {
				eo.BaseEndpoint = &o.EKSEndpoint
			}
		}),
	}, nil
}
