package aws_test

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/smithy-go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/aws"
	"github.com/capstan-dev/capstan/pkg/test"
	"github.com/capstan-dev/capstan/test/ec2endpoint"
)

// policyFiles are the controller policies docs/iam ships: the reference's
// and Capstan's own.
var policyFiles = []string{"karpenter-controller-policy.yaml", "capstan-controller-policy.yaml"}

const policyCluster = "policy"

// policyEnv is a provider on an endpoint enforcing one policy file: the
// provider's EC2 client (wrapped by wrap, when given) signs as the
// restricted controller, while the test's setup calls sign as the
// account's administrator.
func policyEnv(t *testing.T, file string, wrap func(aws.EC2) aws.EC2) (*aws.Provider, *awsv1.EC2NodeClass, *clocktesting.FakeClock) {
	t.Helper()
	tmpl, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "iam", file))
	if err != nil {
		t.Fatal(err)
	}
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	profile := &simv1alpha1.CloudProfile{Spec: simv1alpha1.CloudProfileSpec{
		Region: "us-west-2", Zones: []string{"us-west-2a", "us-west-2b"}, Style: simv1alpha1.CloudStyleAWS,
		LaunchLatency: metav1.Duration{Duration: 2 * time.Second},
	}}
	srv, err := ec2endpoint.New(ec2endpoint.Options{Profile: profile, Clock: clk, ClusterName: policyCluster, PolicyTemplates: [][]byte{tmpl},
		ClusterEndpoint: "https://" + policyCluster + ".eks.test", ClusterCABundle: base64.StdEncoding.EncodeToString([]byte(policyCluster + " CA"))})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		hs.Close()
		_ = srv.Close()
	})
	client := func(key string) *ec2.Client {
		return ec2.New(ec2.Options{Region: "us-west-2", BaseEndpoint: awssdk.String(hs.URL), RetryMaxAttempts: 1, HTTPClient: aws.NewHTTPClient(),
			Credentials: credentials.NewStaticCredentialsProvider(key, "SECRET", "")})
	}
	class := readyNodeClass(t, client(ec2endpoint.AdminAccessKeyID), policyCluster)
	// A profile holding the reference's node role, so launches pass it
	// (iam:PassRole).
	admin := iam.New(iam.Options{Region: "us-east-1", BaseEndpoint: awssdk.String(hs.URL), RetryMaxAttempts: 1, HTTPClient: aws.NewHTTPClient(),
		Credentials: credentials.NewStaticCredentialsProvider(ec2endpoint.AdminAccessKeyID, "SECRET", "")})
	ctx := context.Background()
	if _, err := admin.CreateInstanceProfile(ctx, &iam.CreateInstanceProfileInput{InstanceProfileName: class.Spec.InstanceProfile}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.AddRoleToInstanceProfile(ctx, &iam.AddRoleToInstanceProfileInput{InstanceProfileName: class.Spec.InstanceProfile,
		RoleName: awssdk.String("KarpenterNodeRole-" + policyCluster)}); err != nil {
		t.Fatal(err)
	}
	var api aws.EC2 = client("AKIDCONTROLLER")
	if wrap != nil {
		api = wrap(api)
	}
	// The cluster is discovered as the restricted controller too, so
	// eks:DescribeCluster is under the policy.
	cluster := &aws.ClusterDiscovery{Name: policyCluster, Clock: clk, EKS: eks.New(eks.Options{Region: "us-west-2", BaseEndpoint: awssdk.String(hs.URL),
		RetryMaxAttempts: 1, HTTPClient: aws.NewHTTPClient(), Credentials: credentials.NewStaticCredentialsProvider("AKIDCONTROLLER", "SECRET", "")})}
	if b, err := cluster.Bootstrap(context.Background()); err != nil || len(b.Missing(awsv1.AMIFamilyAL2023)) > 0 {
		t.Fatalf("discovering the cluster under %s: %+v, %v", file, b, err)
	}
	p, err := aws.New(api, aws.Options{Region: "us-west-2", ClusterName: policyCluster, Clock: clk, NodeClasses: nodeClasses{class.Name: class}, Cluster: cluster})
	if err != nil {
		t.Fatal(err)
	}
	return p, class, clk
}

func policyNodeClaim(class *awsv1.EC2NodeClass, capacityType string) *v1.NodeClaim {
	return test.NodeClaim(func(nc *v1.NodeClaim) {
		nc.Labels = map[string]string{v1.NodePoolLabelKey: "default"}
		nc.Spec.NodeClassRef = &v1.NodeClassReference{Group: awsv1.Group, Kind: aws.NodeClassKind, Name: class.Name}
		nc.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{
			{Key: v1.LabelInstanceType, Operator: corev1.NodeSelectorOpIn, Values: []string{"m5.large", "c5.large"}},
			{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{capacityType}},
		}
	})
}

// Capstan's provider does all it does under each controller policy:
// describes the region, launches on-demand and spot, lists and
// terminates.
func TestProviderUnderEachPolicy(t *testing.T) {
	for _, file := range policyFiles {
		t.Run(file, func(t *testing.T) {
			p, class, _ := policyEnv(t, file, nil)
			ctx := context.Background()
			if err := p.Refresh(ctx); err != nil {
				t.Fatalf("refreshing the catalog: %v", err)
			}
			for _, ct := range []string{v1.CapacityTypeOnDemand, v1.CapacityTypeSpot} {
				got, err := p.Create(ctx, policyNodeClaim(class, ct))
				if err != nil {
					t.Fatalf("launching %s: %v", ct, err)
				}
				if got.Labels[v1.CapacityTypeLabelKey] != ct {
					t.Errorf("launched %s, want %s", got.Labels[v1.CapacityTypeLabelKey], ct)
				}
				if err := p.Delete(ctx, got); err != nil {
					t.Errorf("terminating %s: %v", got.Status.ProviderID, err)
				}
			}
			if _, err := p.List(ctx); err != nil {
				t.Errorf("listing: %v", err)
			}
		})
	}
}

// dropTag strips one tag from every tag specification of the launch
// requests, standing for a provider that forgot it.
type dropTag struct {
	aws.EC2
	key string
}

func (d dropTag) without(tags []ec2types.Tag) []ec2types.Tag {
	return slices.DeleteFunc(slices.Clone(tags), func(t ec2types.Tag) bool { return awssdk.ToString(t.Key) == d.key })
}

func (d dropTag) CreateLaunchTemplate(ctx context.Context, in *ec2.CreateLaunchTemplateInput, opts ...func(*ec2.Options)) (*ec2.CreateLaunchTemplateOutput, error) {
	for i := range in.TagSpecifications {
		in.TagSpecifications[i].Tags = d.without(in.TagSpecifications[i].Tags)
	}
	for i := range in.LaunchTemplateData.TagSpecifications {
		in.LaunchTemplateData.TagSpecifications[i].Tags = d.without(in.LaunchTemplateData.TagSpecifications[i].Tags)
	}
	return d.EC2.CreateLaunchTemplate(ctx, in, opts...)
}

func (d dropTag) CreateFleet(ctx context.Context, in *ec2.CreateFleetInput, opts ...func(*ec2.Options)) (*ec2.CreateFleetOutput, error) {
	for i := range in.TagSpecifications {
		in.TagSpecifications[i].Tags = d.without(in.TagSpecifications[i].Tags)
	}
	return d.EC2.CreateFleet(ctx, in, opts...)
}

// Without karpenter.sh/nodepool on what it creates, a launch is refused
// under each policy, as IAM would refuse it.
func TestLaunchWithoutNodePoolTagIsUnauthorized(t *testing.T) {
	for _, file := range policyFiles {
		t.Run(file, func(t *testing.T) {
			p, class, _ := policyEnv(t, file, func(api aws.EC2) aws.EC2 { return dropTag{EC2: api, key: v1.NodePoolLabelKey} })
			_, err := p.Create(context.Background(), policyNodeClaim(class, v1.CapacityTypeOnDemand))
			var apiErr smithy.APIError
			if !errors.As(err, &apiErr) || apiErr.ErrorCode() != "UnauthorizedOperation" {
				t.Fatalf("launch without %s: %v, want UnauthorizedOperation", v1.NodePoolLabelKey, err)
			}
		})
	}
}
