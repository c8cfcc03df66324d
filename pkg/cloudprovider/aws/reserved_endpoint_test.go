package aws_test

import (
	"context"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/aws"
	"github.com/capstan-dev/capstan/test/ec2endpoint"
)

const (
	reservedZone  = "us-west-2a"
	reservedType  = "m5.large"
	reservedOwner = "111122223333"
)

// reservedEnv is a provider over a local endpoint whose account holds
// one reservation of each kind, all for m5.large in us-west-2a.
type reservedEnv struct {
	clk   *clocktesting.FakeClock
	api   *ec2.Client
	class *awsv1.EC2NodeClass
	p     *aws.Provider
	start time.Time
}

func newReservedEnv(t *testing.T, opts ec2endpoint.Options) *reservedEnv {
	t.Helper()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(start)
	end := &metav1.Duration{Duration: 10 * time.Hour}
	reservation := func(id string, mod func(*simv1alpha1.Reservation)) simv1alpha1.Reservation {
		r := simv1alpha1.Reservation{ID: id, InstanceType: reservedType, Zone: reservedZone, Count: 2, Type: simv1alpha1.ReservationTypeTargeted, OwnerID: reservedOwner}
		mod(&r)
		return r
	}
	opts.Profile = &simv1alpha1.CloudProfile{Spec: simv1alpha1.CloudProfileSpec{
		Region: "us-west-2", Zones: []string{"us-west-2a", "us-west-2b"}, Style: simv1alpha1.CloudStyleAWS,
		LaunchLatency: metav1.Duration{Duration: 2 * time.Second},
		Reservations: []simv1alpha1.Reservation{
			reservation("cr-default", func(*simv1alpha1.Reservation) {}),
			reservation("cr-block", func(r *simv1alpha1.Reservation) { r.CapacityBlock, r.EndTime = true, end }),
			reservation("cr-interruptible", func(r *simv1alpha1.Reservation) { r.Interruptible = true }),
		},
	}}
	opts.Clock, opts.ClusterName = clk, "reserved"
	api, cluster := endpoint(t, opts)
	class := readyNodeClass(t, api, "reserved")
	p, err := aws.New(api, aws.Options{Region: "us-west-2", ClusterName: "reserved", Clock: clk, NodeClasses: nodeClasses{class.Name: class}, Cluster: cluster})
	if err != nil {
		t.Fatal(err)
	}
	return &reservedEnv{clk: clk, api: api, class: class, p: p, start: start}
}

// reserve puts the reservation in the NodeClass's status, as the
// ec2nodeclass controller resolves it.
func (e *reservedEnv) reserve(id string, mod func(*awsv1.CapacityReservation)) {
	r := awsv1.CapacityReservation{ID: id, AvailabilityZone: reservedZone, InstanceType: reservedType, OwnerID: reservedOwner,
		InstanceMatchCriteria: awsv1.InstanceMatchCriteriaTargeted, ReservationType: awsv1.CapacityReservationTypeDefault, State: awsv1.CapacityReservationStateActive}
	mod(&r)
	e.class.Status.CapacityReservations = append(e.class.Status.CapacityReservations, r)
}

func (e *reservedEnv) nodeClaim(name string, reqs ...v1.NodeSelectorRequirementWithMinValues) *v1.NodeClaim {
	nc := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, UID: k8stypes.UID("uid-" + name), Labels: map[string]string{v1.NodePoolLabelKey: "reserved"}}}
	nc.Spec.NodeClassRef = &v1.NodeClassReference{Group: awsv1.Group, Kind: aws.NodeClassKind, Name: e.class.Name}
	nc.Spec.Requirements = append([]v1.NodeSelectorRequirementWithMinValues{
		{Key: v1.LabelInstanceType, Operator: corev1.NodeSelectorOpIn, Values: []string{reservedType}},
	}, reqs...)
	return nc
}

func requirement(key string, values ...string) v1.NodeSelectorRequirementWithMinValues {
	return v1.NodeSelectorRequirementWithMinValues{Key: key, Operator: corev1.NodeSelectorOpIn, Values: values}
}

// Each kind of reservation launches through the endpoint, which refuses
// a capacity block or an interruptible reservation launched without its
// market and target capacity types, and the NodeClaim carries the
// reservation's labels.
func TestReservedLaunchPerKind(t *testing.T) {
	cases := []struct {
		name, id      string
		status        func(*awsv1.CapacityReservation)
		reservationTy string
		interruptible string
	}{
		{"a default reservation", "cr-default", func(*awsv1.CapacityReservation) {}, v1.ReservationTypeDefault, "false"},
		{"a capacity block", "cr-block", func(r *awsv1.CapacityReservation) {
			r.ReservationType = awsv1.CapacityReservationTypeCapacityBlock
			r.EndTime = &metav1.Time{Time: time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)}
		}, v1.ReservationTypeCapacityBlock, "false"},
		{"an interruptible reservation", "cr-interruptible", func(r *awsv1.CapacityReservation) { r.Interruptible = true }, v1.ReservationTypeDefault, "true"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newReservedEnv(t, ec2endpoint.Options{})
			e.reserve(tc.id, tc.status)
			got, err := e.p.Create(context.Background(), e.nodeClaim("nc-1", requirement(v1.CapacityTypeLabelKey, v1.CapacityTypeReserved)))
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{
				v1.CapacityTypeLabelKey: v1.CapacityTypeReserved, v1.LabelCapacityReservationID: tc.id,
				v1.LabelCapacityReservationType: tc.reservationTy, v1.LabelCapacityReservationInterruptible: tc.interruptible,
			}
			for k, v := range want {
				if got.Labels[k] != v {
					t.Errorf("label %s = %q, want %q", k, got.Labels[k], v)
				}
			}
			// The instance as EC2 describes it says the same.
			described, err := e.p.Get(context.Background(), got.Status.ProviderID)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range want {
				if described.Labels[k] != v {
					t.Errorf("described label %s = %q, want %q", k, described.Labels[k], v)
				}
			}
		})
	}
}

// A NodePool requirement on the reservation type picks among
// reservations, and an expiring capacity block takes no launch.
func TestReservedLaunchFilters(t *testing.T) {
	blockEnd := &metav1.Time{Time: time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)}
	cases := []struct {
		name    string
		expire  bool
		reqs    []v1.NodeSelectorRequirementWithMinValues
		want    string // reservation launched into; "" for an insufficient-capacity error
		offered map[string]int
	}{
		{name: "cheapest kind first: the default reservation", reqs: []v1.NodeSelectorRequirementWithMinValues{requirement(v1.CapacityTypeLabelKey, v1.CapacityTypeReserved)},
			want: "cr-default", offered: map[string]int{"cr-default": 2, "cr-block": 2}},
		{name: "capacity blocks only", reqs: []v1.NodeSelectorRequirementWithMinValues{requirement(v1.CapacityTypeLabelKey, v1.CapacityTypeReserved), requirement(v1.LabelCapacityReservationType, v1.ReservationTypeCapacityBlock)},
			want: "cr-block", offered: map[string]int{"cr-default": 2, "cr-block": 2}},
		{name: "an expiring block is not offered", expire: true,
			reqs:    []v1.NodeSelectorRequirementWithMinValues{requirement(v1.CapacityTypeLabelKey, v1.CapacityTypeReserved), requirement(v1.LabelCapacityReservationType, v1.ReservationTypeCapacityBlock)},
			offered: map[string]int{"cr-default": 2, "cr-block": 0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newReservedEnv(t, ec2endpoint.Options{})
			e.reserve("cr-default", func(*awsv1.CapacityReservation) {})
			e.reserve("cr-block", func(r *awsv1.CapacityReservation) {
				r.ReservationType, r.EndTime = awsv1.CapacityReservationTypeCapacityBlock, blockEnd
				if tc.expire {
					r.State = awsv1.CapacityReservationStateExpiring
				}
			})
			np := &v1.NodePool{}
			np.Spec.Template.Spec.NodeClassRef = &v1.NodeClassReference{Group: awsv1.Group, Kind: aws.NodeClassKind, Name: e.class.Name}
			its, err := e.p.GetInstanceTypes(context.Background(), np)
			if err != nil {
				t.Fatal(err)
			}
			offered := map[string]int{}
			for _, it := range its {
				for _, o := range it.Offerings {
					if o.ReservationID != "" {
						offered[o.ReservationID] = o.Available
					}
				}
			}
			if diff := cmp.Diff(tc.offered, offered); diff != "" {
				t.Errorf("reserved offerings' free slots (-want +got):\n%s", diff)
			}
			got, err := e.p.Create(context.Background(), e.nodeClaim("nc-1", tc.reqs...))
			if tc.want == "" {
				if _, ok := cloudprovider.AsInsufficientCapacityError(err); !ok {
					t.Fatalf("Create = %v, %v; want an insufficient capacity error", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if id := got.Labels[v1.LabelCapacityReservationID]; id != tc.want {
				t.Errorf("launched into %q, want %q", id, tc.want)
			}
		})
	}
}

// An account whose instance metadata default exposes tags refuses tag
// keys with "/"; Capstan's launch templates disable tags in metadata, so
// its launches (whose tags all have "/") go through.
func TestLaunchUnderInstanceMetadataTagsDefault(t *testing.T) {
	e := newReservedEnv(t, ec2endpoint.Options{InstanceMetadataTags: true})
	got, err := e.p.Create(context.Background(), e.nodeClaim("nc-1", requirement(v1.CapacityTypeLabelKey, v1.CapacityTypeOnDemand)))
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.ProviderID == "" {
		t.Error("no provider id")
	}
}

// A fleet answer without the instance's SubnetId (as EC2 gave before the
// field entered its model) resolves the launch from the echoed override.
func TestLaunchFromAnswerWithoutSubnet(t *testing.T) {
	e := newReservedEnv(t, ec2endpoint.Options{OmitFleetInstancePlacement: true})
	got, err := e.p.Create(context.Background(), e.nodeClaim("nc-1", requirement(v1.CapacityTypeLabelKey, v1.CapacityTypeOnDemand), requirement(v1.LabelZone, "us-west-2b")))
	if err != nil {
		t.Fatal(err)
	}
	if got.Labels[v1.LabelZone] != "us-west-2b" || got.Labels[v1.LabelInstanceType] != reservedType {
		t.Errorf("launched %s in %s, want %s in us-west-2b", got.Labels[v1.LabelInstanceType], got.Labels[v1.LabelZone], reservedType)
	}
	out, err := e.api.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{})
	if err != nil {
		t.Fatal(err)
	}
	running := 0
	for _, r := range out.Reservations {
		running += len(r.Instances)
	}
	if running != 1 {
		t.Errorf("%d instances, want the one launched", running)
	}
}

// A launch template deleted outside Capstan is made again by the next
// launch, which succeeds.
func TestLaunchTemplateDeletedOutside(t *testing.T) {
	ctx := context.Background()
	e := newReservedEnv(t, ec2endpoint.Options{})
	onDemand := requirement(v1.CapacityTypeLabelKey, v1.CapacityTypeOnDemand)
	if _, err := e.p.Create(ctx, e.nodeClaim("nc-1", onDemand)); err != nil {
		t.Fatal(err)
	}
	before, err := e.api.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{})
	if err != nil || len(before.LaunchTemplates) != 1 {
		t.Fatalf("launch templates %v, %v; want one", before, err)
	}
	name := before.LaunchTemplates[0].LaunchTemplateName
	if _, err := e.api.DeleteLaunchTemplate(ctx, &ec2.DeleteLaunchTemplateInput{LaunchTemplateName: name}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.p.Create(ctx, e.nodeClaim("nc-2", onDemand)); err != nil {
		t.Fatalf("launching after the template was deleted: %v", err)
	}
	after, err := e.api.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{LaunchTemplateNames: []string{awssdk.ToString(name)}})
	if err != nil || len(after.LaunchTemplates) != 1 {
		t.Errorf("launch template %s after the launch: %v, %v; want it made again", awssdk.ToString(name), after, err)
	}
}

// The account's capacity blocks, as EC2 describes them, are reclaimed
// from CapacityBlockReclaimLead before their end; other reservations are
// none.
func TestCapacityBlocksFromEndpoint(t *testing.T) {
	e := newReservedEnv(t, ec2endpoint.Options{})
	got, err := e.p.CapacityBlocks(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []cloudprovider.CapacityBlock{{ID: "cr-block", Reclaim: e.start.Add(10*time.Hour - aws.CapacityBlockReclaimLead)}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("capacity blocks (-want +got):\n%s", diff)
	}
}

// A fleet that launches after an offering failed for capacity marks that
// offering unavailable: the launch succeeds, so only the provider can.
// c5.large is the cheaper on-demand type and has no capacity; m5.large
// launches in the same answer.
func TestLaunchMarksCapacityErrorsBesideTheInstance(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(start)
	empty := func(zone string) simv1alpha1.CapacityPool {
		return simv1alpha1.CapacityPool{InstanceType: "c5.large", Zone: zone, CapacityType: v1.CapacityTypeOnDemand, Count: 0}
	}
	opts := ec2endpoint.Options{Clock: clk, ClusterName: "marks", Profile: &simv1alpha1.CloudProfile{Spec: simv1alpha1.CloudProfileSpec{
		Region: "us-west-2", Zones: []string{"us-west-2a"}, Style: simv1alpha1.CloudStyleAWS,
		LaunchLatency: metav1.Duration{Duration: 2 * time.Second},
		Capacity:      []simv1alpha1.CapacityPool{empty("us-west-2a")},
	}}}
	api, cluster := endpoint(t, opts)
	class := readyNodeClass(t, api, "marks")
	unavailable := cloudprovider.NewUnavailableOfferings(clk, 0)
	p, err := aws.New(api, aws.Options{Region: "us-west-2", ClusterName: "marks", Clock: clk, NodeClasses: nodeClasses{class.Name: class}, Cluster: cluster, Unavailable: unavailable})
	if err != nil {
		t.Fatal(err)
	}
	nc := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "nc-1", UID: "uid-nc-1", Labels: map[string]string{v1.NodePoolLabelKey: "marks"}}}
	nc.Spec.NodeClassRef = &v1.NodeClassReference{Group: awsv1.Group, Kind: aws.NodeClassKind, Name: class.Name}
	nc.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{
		requirement(v1.LabelInstanceType, "c5.large", "m5.large"), requirement(v1.CapacityTypeLabelKey, v1.CapacityTypeOnDemand),
	}
	got, err := p.Create(context.Background(), nc)
	if err != nil {
		t.Fatal(err)
	}
	if got.Labels[v1.LabelInstanceType] != "m5.large" {
		t.Fatalf("launched %s, want m5.large after c5.large failed", got.Labels[v1.LabelInstanceType])
	}
	key := cloudprovider.OfferingKey{CapacityType: v1.CapacityTypeOnDemand, InstanceType: "c5.large", Zone: "us-west-2a"}
	if reason, ok := unavailable.Reason(key); !ok || reason != string(cloudprovider.CodeInsufficientInstanceCapacity) {
		t.Errorf("%s marked %t (%q), want marked InsufficientInstanceCapacity", key, ok, reason)
	}
	if unavailable.IsUnavailable(cloudprovider.OfferingKey{CapacityType: v1.CapacityTypeOnDemand, InstanceType: "m5.large", Zone: "us-west-2a"}) {
		t.Error("the launched offering is marked unavailable")
	}
}
