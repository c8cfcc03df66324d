package aws_test

import (
	"cmp"
	"context"
	"encoding/base64"
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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
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
// account's administrator. mods change the cloud's profile.
func policyEnv(t *testing.T, file string, wrap func(aws.EC2) aws.EC2, mods ...func(*simv1alpha1.CloudProfileSpec)) (*aws.Provider, *awsv1.EC2NodeClass, *clocktesting.FakeClock) {
	t.Helper()
	return policyEnvWith(t, file, wrap, aws.Options{}, mods...)
}

// policyEnvWith is policyEnv with the provider's options beyond the
// environment's (its FleetBatch).
func policyEnvWith(t *testing.T, file string, wrap func(aws.EC2) aws.EC2, extra aws.Options, mods ...func(*simv1alpha1.CloudProfileSpec)) (*aws.Provider, *awsv1.EC2NodeClass, *clocktesting.FakeClock) {
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
	for _, mod := range mods {
		mod(&profile.Spec)
	}
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
	p, err := aws.New(api, aws.Options{Region: "us-west-2", ClusterName: policyCluster, Clock: clk, NodeClasses: nodeClasses{class.Name: class}, Cluster: cluster,
		FleetBatch: extra.FleetBatch})
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

// A capacity reservation shared from another account (through RAM, as
// capacity blocks and ODCRs may be) keeps its owner's account in its ARN;
// each policy allows launching into it, as the EC2NodeClass's ownerID
// selector means it to.
func TestLaunchIntoSharedReservationUnderEachPolicy(t *testing.T) {
	const owner, id = "444455556666", "cr-shared"
	shared := func(s *simv1alpha1.CloudProfileSpec) {
		s.Reservations = []simv1alpha1.Reservation{{ID: id, InstanceType: "m5.large", Zone: "us-west-2a", Count: 1, Type: simv1alpha1.ReservationTypeTargeted, OwnerID: owner}}
	}
	for _, file := range policyFiles {
		t.Run(file, func(t *testing.T) {
			p, class, _ := policyEnv(t, file, nil, shared)
			class.Status.CapacityReservations = []awsv1.CapacityReservation{{ID: id, AvailabilityZone: "us-west-2a", InstanceType: "m5.large", OwnerID: owner,
				InstanceMatchCriteria: awsv1.InstanceMatchCriteriaTargeted, ReservationType: awsv1.CapacityReservationTypeDefault, State: awsv1.CapacityReservationStateActive}}
			got, err := p.Create(context.Background(), policyNodeClaim(class, v1.CapacityTypeReserved))
			if err != nil {
				t.Fatalf("launching into %s of account %s: %v", id, owner, err)
			}
			if got.Labels[v1.LabelCapacityReservationID] != id {
				t.Errorf("launched into %q, want %s", got.Labels[v1.LabelCapacityReservationID], id)
			}
		})
	}
}

// tagSpec names one tag specification of a launch: the fleet request's
// (instance, volume, fleet), the launch template data's
// (network-interface, volume, spot-instances-request), or the launch
// template's own; "fleet and template data" is both of a type tagged in
// both.
type tagSpec struct {
	in           string // "fleet", "template data", "template" or "fleet and template data"
	resourceType ec2types.ResourceType
}

func (s tagSpec) String() string { return s.in + " " + string(s.resourceType) }

// dropTag strips one tag from one tag specification of the launch
// requests, standing for a provider that forgot it there.
type dropTag struct {
	aws.EC2
	key  string
	from tagSpec
}

func (d dropTag) without(rt ec2types.ResourceType, in string, tags []ec2types.Tag) []ec2types.Tag {
	if rt != d.from.resourceType || in != d.from.in && d.from.in != "fleet and template data" {
		return tags
	}
	return slices.DeleteFunc(slices.Clone(tags), func(t ec2types.Tag) bool { return awssdk.ToString(t.Key) == d.key })
}

func (d dropTag) CreateLaunchTemplate(ctx context.Context, in *ec2.CreateLaunchTemplateInput, opts ...func(*ec2.Options)) (*ec2.CreateLaunchTemplateOutput, error) {
	for i, ts := range in.TagSpecifications {
		in.TagSpecifications[i].Tags = d.without(ts.ResourceType, "template", ts.Tags)
	}
	for i, ts := range in.LaunchTemplateData.TagSpecifications {
		in.LaunchTemplateData.TagSpecifications[i].Tags = d.without(ts.ResourceType, "template data", ts.Tags)
	}
	return d.EC2.CreateLaunchTemplate(ctx, in, opts...)
}

func (d dropTag) CreateFleet(ctx context.Context, in *ec2.CreateFleetInput, opts ...func(*ec2.Options)) (*ec2.CreateFleetOutput, error) {
	for i, ts := range in.TagSpecifications {
		in.TagSpecifications[i].Tags = d.without(ts.ResourceType, "fleet", ts.Tags)
	}
	return d.EC2.CreateFleet(ctx, in, opts...)
}

// Each tag specification of a launch matters under each policy: without
// the tag the policy conditions that resource type on, the launch is
// refused (UnauthorizedOperation: at CreateLaunchTemplate for the
// template's tags, among the fleet's errors for what RunInstances
// creates, at CreateFleet for the fleet's). Both policies condition every
// resource type Capstan creates on the cluster's owned tag (the
// reference's AllowScopedEC2InstanceActionsWithTags and
// AllowScopedResourceCreationTagging; Capstan's CreateClusterResources and
// TagOnCreateOnly), and Capstan's its launch templates on
// karpenter.k8s.aws/cluster too (CreateClusterLaunchTemplates). Volumes
// are tagged by the fleet and by the template data, and the endpoint
// authorizes a launch's volume on both merged (authorizeLaunch): dropping
// the tag from one leaves the other's, and the launch goes through, so
// either specification alone suffices for the volume; without both it is
// refused.
func TestLaunchWithoutOneTagIsUnauthorized(t *testing.T) {
	clusterTag := "kubernetes.io/cluster/" + policyCluster
	cases := []struct {
		policy       string
		from         tagSpec
		key          string
		capacityType string
		allowed      bool
	}{
		{policy: policyFiles[0], from: tagSpec{"fleet", ec2types.ResourceTypeInstance}},
		{policy: policyFiles[0], from: tagSpec{"fleet", ec2types.ResourceTypeFleet}},
		{policy: policyFiles[0], from: tagSpec{"fleet", ec2types.ResourceTypeVolume}, allowed: true},
		{policy: policyFiles[0], from: tagSpec{"template data", ec2types.ResourceTypeNetworkInterface}},
		{policy: policyFiles[0], from: tagSpec{"template data", ec2types.ResourceTypeVolume}, allowed: true},
		{policy: policyFiles[0], from: tagSpec{"fleet and template data", ec2types.ResourceTypeVolume}},
		{policy: policyFiles[0], from: tagSpec{"template data", ec2types.ResourceTypeSpotInstancesRequest}, capacityType: v1.CapacityTypeSpot},
		{policy: policyFiles[0], from: tagSpec{"template", ec2types.ResourceTypeLaunchTemplate}},
		{policy: policyFiles[1], from: tagSpec{"fleet", ec2types.ResourceTypeInstance}},
		{policy: policyFiles[1], from: tagSpec{"fleet", ec2types.ResourceTypeFleet}},
		{policy: policyFiles[1], from: tagSpec{"fleet", ec2types.ResourceTypeVolume}, allowed: true},
		{policy: policyFiles[1], from: tagSpec{"template data", ec2types.ResourceTypeNetworkInterface}},
		{policy: policyFiles[1], from: tagSpec{"template data", ec2types.ResourceTypeVolume}, allowed: true},
		{policy: policyFiles[1], from: tagSpec{"fleet and template data", ec2types.ResourceTypeVolume}},
		{policy: policyFiles[1], from: tagSpec{"template data", ec2types.ResourceTypeSpotInstancesRequest}, capacityType: v1.CapacityTypeSpot},
		{policy: policyFiles[1], from: tagSpec{"template", ec2types.ResourceTypeLaunchTemplate}},
		{policy: policyFiles[1], from: tagSpec{"template", ec2types.ResourceTypeLaunchTemplate}, key: aws.TagLaunchTemplateCluster},
	}
	for _, tc := range cases {
		key := cmp.Or(tc.key, clusterTag)
		ct := cmp.Or(tc.capacityType, v1.CapacityTypeOnDemand)
		t.Run(tc.policy+"/"+tc.from.String()+"/"+key, func(t *testing.T) {
			p, class, _ := policyEnv(t, tc.policy, func(api aws.EC2) aws.EC2 { return dropTag{EC2: api, key: key, from: tc.from} })
			_, err := p.Create(context.Background(), policyNodeClaim(class, ct))
			if tc.allowed {
				if err != nil {
					t.Fatalf("%s launch without %s on the %s: %v, want it launched", ct, key, tc.from, err)
				}
				return
			}
			if ce, ok := cloudprovider.AsCreateError(err); !ok || ce.Code != string(cloudprovider.CodeUnauthorizedOperation) {
				t.Fatalf("%s launch without %s on the %s: %v, want UnauthorizedOperation", ct, key, tc.from, err)
			}
		})
	}
}
