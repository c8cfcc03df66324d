package ec2endpoint_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/google/go-cmp/cmp"

	"github.com/capstan-dev/capstan/test/ec2endpoint"
)

// DescribeCluster, through aws-sdk-go-v2's EKS client: the cluster's
// endpoint, CA and service CIDR, CREATING without an endpoint, and
// ResourceNotFoundException for a cluster the account does not have.
func TestDescribeCluster(t *testing.T) {
	cases := []struct {
		name     string
		opts     ec2endpoint.Options
		cluster  string
		want     *ekstypes.Cluster
		notFound bool
	}{
		{"active", ec2endpoint.Options{ClusterName: "prod", ClusterEndpoint: "https://prod.eks.test", ClusterCABundle: "Q0E=", ServiceCIDR: "10.100.0.0/16"}, "prod",
			&ekstypes.Cluster{Name: aws.String("prod"), Arn: aws.String("arn:aws:eks:us-west-2:111122223333:cluster/prod"), Status: ekstypes.ClusterStatusActive, Version: aws.String(ec2endpoint.DefaultKubernetesVersion),
				Endpoint: aws.String("https://prod.eks.test"), CertificateAuthority: &ekstypes.Certificate{Data: aws.String("Q0E=")},
				KubernetesNetworkConfig: &ekstypes.KubernetesNetworkConfigResponse{ServiceIpv4Cidr: aws.String("10.100.0.0/16"), IpFamily: ekstypes.IpFamilyIpv4},
				ResourcesVpcConfig:      &ekstypes.VpcConfigResponse{VpcId: aws.String("vpc-00000000000000001")}}, false},
		{"creating, the default service CIDR", ec2endpoint.Options{ClusterName: "prod"}, "prod",
			&ekstypes.Cluster{Name: aws.String("prod"), Arn: aws.String("arn:aws:eks:us-west-2:111122223333:cluster/prod"), Status: ekstypes.ClusterStatusCreating, Version: aws.String(ec2endpoint.DefaultKubernetesVersion),
				KubernetesNetworkConfig: &ekstypes.KubernetesNetworkConfigResponse{ServiceIpv4Cidr: aws.String("172.20.0.0/16"), IpFamily: ekstypes.IpFamilyIpv4},
				ResourcesVpcConfig:      &ekstypes.VpcConfigResponse{VpcId: aws.String("vpc-00000000000000001")}}, false},
		{"another cluster", ec2endpoint.Options{ClusterName: "prod"}, "other", nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Profile = profile()
			s, err := ec2endpoint.New(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			hs := httptest.NewServer(s)
			t.Cleanup(hs.Close)
			api := eks.New(eks.Options{Region: "us-west-2", BaseEndpoint: aws.String(hs.URL), RetryMaxAttempts: 1, HTTPClient: ec2endpoint.NewHTTPClient(),
				Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", "")})
			out, err := api.DescribeCluster(context.Background(), &eks.DescribeClusterInput{Name: aws.String(tc.cluster)})
			var nf *ekstypes.ResourceNotFoundException
			if errors.As(err, &nf) != tc.notFound || (err != nil && !tc.notFound) {
				t.Fatalf("error %v, want ResourceNotFoundException: %t", err, tc.notFound)
			}
			if tc.notFound {
				return
			}
			if diff := cmp.Diff(tc.want, out.Cluster, cmp.AllowUnexported(ekstypes.Cluster{}, ekstypes.Certificate{}, ekstypes.KubernetesNetworkConfigResponse{}, ekstypes.VpcConfigResponse{})); diff != "" {
				t.Errorf("cluster (-want +got):\n%s", diff)
			}
			if arn := s.ClusterARN("prod"); arn != "arn:aws:eks:us-west-2:111122223333:cluster/prod" {
				t.Errorf("ARN %s", arn)
			}
		})
	}
}
