package aws_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/aws"
	"github.com/capstan-dev/capstan/pkg/test"
	"github.com/capstan-dev/capstan/pkg/test/conformance"
	"github.com/capstan-dev/capstan/test/ec2endpoint"
)

// conformanceTypes are the instance types the conformance NodePool
// allows: few, so selling them all out is a short profile.
var conformanceTypes = []string{"m5.large", "m5.xlarge", "c5.large", "c5.xlarge", "m5.2xlarge"}

// The AWS provider meets the CloudProvider contract, through the real SDK
// against the local EC2 endpoint over the simulated cloud.
func TestConformance(t *testing.T) {
	conformance.Run(t, func(t *testing.T, soldOut ...string) conformance.Env {
		clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		profile := &simv1alpha1.CloudProfile{Spec: simv1alpha1.CloudProfileSpec{
			Region: "us-west-2", Zones: []string{"us-west-2a", "us-west-2b"}, Style: simv1alpha1.CloudStyleAWS,
			LaunchLatency: metav1.Duration{Duration: 2 * time.Second},
		}}
		for _, ct := range soldOut {
			for _, it := range conformanceTypes {
				for _, z := range profile.Spec.Zones {
					profile.Spec.Capacity = append(profile.Spec.Capacity, simv1alpha1.CapacityPool{InstanceType: it, Zone: z, CapacityType: ct, Count: 0})
				}
			}
		}
		api, cluster := endpoint(t, ec2endpoint.Options{Profile: profile, Clock: clk, ClusterName: "conformance"})
		class := readyNodeClass(t, api, "conformance")
		p, err := aws.New(api, aws.Options{Region: "us-west-2", ClusterName: "conformance", Clock: clk, NodeClasses: nodeClasses{class.Name: class}, Cluster: cluster})
		if err != nil {
			t.Fatal(err)
		}
		np := test.NodePool(func(np *v1.NodePool) {
			np.Name = "conformance"
			np.Spec.Template.Spec.NodeClassRef = &v1.NodeClassReference{Group: awsv1.Group, Kind: aws.NodeClassKind, Name: class.Name}
			np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{{Key: v1.LabelInstanceType, Operator: corev1.NodeSelectorOpIn, Values: conformanceTypes}}
		})
		return conformance.Env{Provider: p, NodePool: np, Settle: func(*testing.T) { clk.Step(time.Minute) }}
	})
}

// endpoint starts a local EC2 endpoint, its EKS cluster opts.ClusterName
// at an API server and CA of its own unless opts gives them, and returns
// an SDK client for it and the discovery of that cluster through it.
func endpoint(t testing.TB, opts ec2endpoint.Options) (*ec2.Client, *aws.ClusterDiscovery) {
	t.Helper()
	return endpointWith(t, opts, nil)
}

// endpointWith is endpoint, also setting *server to the endpoint when
// server is not nil.
func endpointWith(t testing.TB, opts ec2endpoint.Options, server **ec2endpoint.Server) (*ec2.Client, *aws.ClusterDiscovery) {
	t.Helper()
	if opts.ClusterEndpoint == "" {
		opts.ClusterEndpoint = "https://" + opts.ClusterName + ".eks.test"
		opts.ClusterCABundle = base64.StdEncoding.EncodeToString([]byte(opts.ClusterName + " CA"))
	}
	srv, err := ec2endpoint.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if server != nil {
		*server = srv
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		hs.Close()
		_ = srv.Close()
	})
	creds := credentials.NewStaticCredentialsProvider("AKID", "SECRET", "")
	api := ec2.New(ec2.Options{Region: "us-west-2", BaseEndpoint: awssdk.String(hs.URL), RetryMaxAttempts: 1, HTTPClient: aws.NewHTTPClient(), Credentials: creds})
	eksAPI := eks.New(eks.Options{Region: "us-west-2", BaseEndpoint: awssdk.String(hs.URL), RetryMaxAttempts: 1, HTTPClient: aws.NewHTTPClient(), Credentials: creds})
	return api, &aws.ClusterDiscovery{EKS: eksAPI, Name: opts.ClusterName, Clock: clocktesting.NewFakeClock(time.Now())}
}

// readyNodeClass is an EC2NodeClass whose status holds the endpoint's
// subnets, security groups and newest AL2023 AMIs, Ready, as the
// ec2nodeclass controller would resolve them.
func readyNodeClass(t testing.TB, api *ec2.Client, name string) *awsv1.EC2NodeClass {
	t.Helper()
	ctx := context.Background()
	class := &awsv1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: name}}
	class.Spec.InstanceProfile = awssdk.String("conformance-profile")
	class.Spec.AMISelectorTerms = []awsv1.AMISelectorTerm{{Alias: "al2023@latest"}}
	subnets, err := api.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range subnets.Subnets {
		class.Status.Subnets = append(class.Status.Subnets, awsv1.Subnet{ID: awssdk.ToString(s.SubnetId), Zone: awssdk.ToString(s.AvailabilityZone), ZoneID: awssdk.ToString(s.AvailabilityZoneId)})
	}
	groups, err := api.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range groups.SecurityGroups {
		class.Status.SecurityGroups = append(class.Status.SecurityGroups, awsv1.SecurityGroup{ID: awssdk.ToString(g.GroupId), Name: awssdk.ToString(g.GroupName)})
	}
	images, err := api.DescribeImages(ctx, &ec2.DescribeImagesInput{Owners: []string{"amazon"}, Filters: []ec2types.Filter{{Name: awssdk.String("name"), Values: []string{"amazon-eks-node-al2023-*"}}}})
	if err != nil {
		t.Fatal(err)
	}
	arch := map[ec2types.ArchitectureValues]string{ec2types.ArchitectureValuesX8664: "amd64", ec2types.ArchitectureValuesArm64: "arm64"}
	seen := map[string]bool{}
	for _, img := range images.Images {
		a := arch[img.Architecture]
		if a == "" || seen[a] {
			continue
		}
		seen[a] = true
		class.Status.AMIs = append(class.Status.AMIs, awsv1.AMI{ID: awssdk.ToString(img.ImageId), Name: awssdk.ToString(img.Name),
			Requirements: []corev1.NodeSelectorRequirement{{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{a}}}})
	}
	if len(class.Status.Subnets) == 0 || len(class.Status.SecurityGroups) == 0 || len(class.Status.AMIs) == 0 {
		t.Fatalf("the endpoint has %d subnets, %d security groups, %d AL2023 AMIs", len(class.Status.Subnets), len(class.Status.SecurityGroups), len(class.Status.AMIs))
	}
	class.Status.InstanceProfile = "conformance-profile"
	class.Status.Conditions = []metav1.Condition{{Type: awsv1.ConditionTypeReady, Status: metav1.ConditionTrue, Reason: "Ready"}}
	return class
}

// nodeClasses serves EC2NodeClasses from memory.
type nodeClasses map[string]*awsv1.EC2NodeClass

func (n nodeClasses) EC2NodeClass(_ context.Context, name string) (*awsv1.EC2NodeClass, error) {
	if nc, ok := n[name]; ok {
		return nc, nil
	}
	return nil, fmt.Errorf("ec2nodeclass %s not found", name)
}
