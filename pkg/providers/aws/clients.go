package aws

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/pricing"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
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
	// ssm reads the image ids of amiSelectorTerms' ssmParameter.
	ssm *ssm.Client
}

// newClients builds the clients for cfg, each at its endpoint flag when
// set, their calls measured on reg.
func newClients(cfg aws.Config, o Options, reg prometheus.Registerer) (clients, error) {
	apiMetrics, err := awscloud.NewAPIMetrics(reg)
	if err != nil {
		return clients{}, err
	}
	// Every client copies these from cfg.
	cfg.HTTPClient = awscloud.NewHTTPClient()
	cfg.APIOptions = append(cfg.APIOptions, apiMetrics.Middleware)
	return clients{
		ec2: ec2.NewFromConfig(cfg, func(eo *ec2.Options) { at(o.Endpoint, &eo.BaseEndpoint) }),
		// The Price List API answers in a few regions only: the
		// partition's nearest (docs/aws.md, "Prices").
		pricing: pricing.NewFromConfig(cfg, func(po *pricing.Options) {
			po.Region = awscloud.PricingRegion(cfg.Region)
			at(o.PricingEndpoint, &po.BaseEndpoint)
		}),
		sqs: sqs.NewFromConfig(cfg, func(so *sqs.Options) { at(o.SQSEndpoint, &so.BaseEndpoint) }),
		iam: iam.NewFromConfig(cfg, func(io *iam.Options) { at(o.IAMEndpoint, &io.BaseEndpoint) }),
		eks: eks.NewFromConfig(cfg, func(eo *eks.Options) { at(o.EKSEndpoint, &eo.BaseEndpoint) }),
		ssm: ssm.NewFromConfig(cfg, func(so *ssm.Options) { at(o.SSMEndpoint, &so.BaseEndpoint) }),
	}, nil
}

// at points a client's base endpoint at url when a flag gave one; else
// the SDK resolves it (the region's, or AWS_ENDPOINT_URL_*).
func at(url string, base **string) {
	if url != "" {
		*base = &url
	}
}
