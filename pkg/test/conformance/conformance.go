package conformance

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/scheduling"
)

// Env is one provider under test with a fresh cloud behind it.
type Env struct {
	Provider cloudprovider.CloudProvider
	// NodePool references a ready NodeClass of the provider's and allows
	// every capacity type.
	NodePool *v1.NodePool
	// Settle lets the cloud move on after a Delete (advances a fake clock,
	// or waits); Delete is retried until it reports the instance gone.
	Settle func(t *testing.T)
}

// Run runs the contract against the providers newEnv builds, a fresh one
// per test. newEnv's cloud has no capacity left (the cloud's own, not the
// unavailable-offerings cache) for any offering of the soldOut capacity
// types of the NodePool's instance types.
func Run(t *testing.T, newEnv func(t *testing.T, soldOut ...string) Env) {
	tests := []struct {
		name string
		run  func(t *testing.T, env Env)
		// soldOut are the capacity types the cloud has none of.
		soldOut []string
	}{
		{name: "Identity", run: identity},
		{name: "InstanceTypes", run: instanceTypes},
		{name: "NodeClassProblems", run: nodeClassProblems},
		{name: "LaunchesAsPlanned/every capacity type", run: func(t *testing.T, env Env) { launchesAsPlanned(t, env, nil) }},
		{name: "LaunchesAsPlanned/on-demand", run: func(t *testing.T, env Env) { launchesAsPlanned(t, env, []string{v1.CapacityTypeOnDemand}) }},
		// The solver does not know the pools are empty (nothing marked
		// them), so it plans spot; the launch must fail over to on-demand
		// no dearer than the claim's cheapest on-demand option.
		{name: "LaunchesAsPlanned/spot sold out", soldOut: []string{v1.CapacityTypeSpot}, run: spotSoldOut},
		{name: "Lifecycle", run: lifecycle},
		{name: "InsufficientCapacity", soldOut: []string{v1.CapacityTypeSpot, v1.CapacityTypeOnDemand}, run: insufficientCapacity},
		{name: "Interruptions", run: interruptions},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newEnv(t, tc.soldOut...)) })
	}
}

func identity(t *testing.T, env Env) {
	p := env.Provider
	if p.Name() == "" {
		t.Error("Name is empty")
	}
	kinds := p.GetSupportedNodeClasses()
	if len(kinds) == 0 {
		t.Fatal("GetSupportedNodeClasses is empty")
	}
	ref := env.NodePool.Spec.Template.Spec.NodeClassRef
	if !slices.ContainsFunc(kinds, func(k schema.GroupVersionKind) bool { return k.Group == ref.Group && k.Kind == ref.Kind }) {
		t.Errorf("the NodePool's nodeClassRef %s.%s is not among the supported kinds %v", ref.Kind, ref.Group, kinds)
	}
	// Repair reads the policies as node conditions: a type, a status a
	// condition can have, a toleration (docs/disruption.md, "Node repair").
	for _, rp := range p.RepairPolicies() {
		if rp.ConditionType == "" || !slices.Contains([]corev1.ConditionStatus{corev1.ConditionTrue, corev1.ConditionFalse, corev1.ConditionUnknown}, rp.ConditionStatus) || rp.TolerationDuration < 0 {
			t.Errorf("repair policy %+v: want a condition type, True, False or Unknown, and a toleration of 0 or more", rp)
		}
	}
}

func instanceTypes(t *testing.T, env Env) {
	its := instanceTypesOf(t, env, env.NodePool)
	for _, it := range its {
		if it.Name == "" {
			t.Fatal("an instance type without a name")
		}
		if got := it.Requirements.Get(v1.LabelInstanceType); !got.Has(it.Name) || got.Len() != 1 {
			t.Errorf("%s: requirement %s is %s, want its name", it.Name, v1.LabelInstanceType, got)
		}
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods} {
			c, a := it.Capacity[r], it.Allocatable()[r]
			if c.Sign() <= 0 || a.Sign() <= 0 || a.Cmp(c) > 0 {
				t.Errorf("%s: %s capacity %s, allocatable %s: want 0 < allocatable <= capacity", it.Name, r, c.String(), a.String())
			}
		}
		if len(it.Offerings) == 0 {
			t.Errorf("%s has no offerings", it.Name)
		}
		for _, o := range it.Offerings {
			checkOffering(t, it.Name, o)
		}
	}
}

func checkOffering(t *testing.T, name string, o *cloudprovider.Offering) {
	t.Helper()
	switch {
	case o.Zone == "":
		t.Errorf("%s: an offering without a zone", name)
	case !slices.Contains([]string{v1.CapacityTypeReserved, v1.CapacityTypeSpot, v1.CapacityTypeOnDemand}, o.CapacityType):
		t.Errorf("%s: offering %s has capacity type %q", name, o.Zone, o.CapacityType)
	case (o.CapacityType == v1.CapacityTypeReserved) != (o.ReservationID != ""):
		t.Errorf("%s: offering %s/%s has reservation id %q: reserved offerings, and only they, have one", name, o.CapacityType, o.Zone, o.ReservationID)
	case o.Price <= 0 || math.IsInf(o.Price, 0) || math.IsNaN(o.Price):
		t.Errorf("%s: offering %s/%s costs %g", name, o.CapacityType, o.Zone, o.Price)
	case o.Available < 0:
		t.Errorf("%s: offering %s/%s has %d available", name, o.CapacityType, o.Zone, o.Available)
	}
}

func nodeClassProblems(t *testing.T, env Env) {
	ctx := context.Background()
	missing := env.NodePool.DeepCopy()
	missing.Spec.Template.Spec.NodeClassRef.Name = "conformance-missing"
	if _, err := env.Provider.GetInstanceTypes(ctx, missing); !cloudprovider.IsNodeClassNotReadyError(err) {
		t.Errorf("GetInstanceTypes for a missing NodeClass: %v, want a NodeClassNotReadyError", err)
	}
	nc := nodeClaim(missing, "conformance-missing", nil)
	if _, err := env.Provider.Create(ctx, nc); !cloudprovider.IsNodeClassNotReadyError(err) {
		t.Errorf("Create with a missing NodeClass: %v, want a NodeClassNotReadyError", err)
	}
	other := env.NodePool.DeepCopy()
	other.Spec.Template.Spec.NodeClassRef = &v1.NodeClassReference{Group: "example.com", Kind: "OtherNodeClass", Name: "default"}
	if _, err := env.Provider.Create(ctx, nodeClaim(other, "conformance-other", nil)); !cloudprovider.IsNodeClassNotReadyError(err) {
		t.Errorf("Create with a kind the provider does not serve: %v, want a NodeClassNotReadyError", err)
	}
}

// launchesAsPlanned solves one small pod over the NodePool (restricted to
// capacityTypes, when given) and checks that Create launches what the
// solver planned: its capacity type, one of its instance types in its
// zones, and on-demand at the lowest price of the claim's options, spot
// no dearer than that.
func launchesAsPlanned(t *testing.T, env Env, capacityTypes []string) {
	np := env.NodePool.DeepCopy()
	if capacityTypes != nil {
		np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements,
			v1.NodeSelectorRequirementWithMinValues{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: capacityTypes})
	}
	its := instanceTypesOf(t, env, np)
	claim := solveOne(t, np, its)
	got, err := env.Provider.Create(context.Background(), provisioning.NewNodeClaim(np, claim, "conformance-plan"))
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	checkLaunched(t, got)
	if ct := got.Labels[v1.CapacityTypeLabelKey]; ct != claim.CapacityType {
		t.Errorf("launched as %s, the solver planned %s", ct, claim.CapacityType)
	}
	name, zone := got.Labels[v1.LabelInstanceType], got.Labels[v1.LabelZone]
	if !slices.ContainsFunc(claim.InstanceTypes, func(it *cloudprovider.InstanceType) bool { return it.Name == name }) {
		t.Errorf("launched %s, not one of the claim's %d instance types", name, len(claim.InstanceTypes))
	}
	if !claim.Requirements.Get(v1.LabelZone).Has(zone) {
		t.Errorf("launched in zone %s, which the claim does not allow", zone)
	}
	price, ok := cloudprovider.LaunchedPrice(got, its)
	if !ok {
		t.Fatalf("no offering of %s/%s/%s among the NodePool's instance types", name, zone, got.Labels[v1.CapacityTypeLabelKey])
	}
	cheapest := lowest(claim, v1.CapacityTypeOnDemand)
	switch claim.CapacityType {
	case v1.CapacityTypeOnDemand:
		if price > cheapest {
			t.Errorf("on-demand launch at %g, the claim's cheapest on-demand option costs %g", price, cheapest)
		}
	case v1.CapacityTypeSpot:
		if price > cheapest {
			t.Errorf("spot launch at %g, dearer than the claim's cheapest on-demand option at %g", price, cheapest)
		}
	}
}

// lowest is the lowest price of an available offering of capacityType
// among the claim's instance types that its requirements (capacity type
// aside) allow; +Inf when there is none.
func lowest(claim *provisioning.NodeClaim, capacityType string) float64 {
	reqs := scheduling.NewRequirements()
	for key := range claim.Requirements.Keys() {
		if key != v1.CapacityTypeLabelKey {
			reqs.Add(claim.Requirements.Get(key))
		}
	}
	best := math.Inf(1)
	for _, it := range claim.InstanceTypes {
		for _, o := range it.Offerings {
			if o.CapacityType == capacityType && o.IsAvailable() && o.CompatibleWith(reqs) {
				best = min(best, o.Price)
			}
		}
	}
	return best
}

// spotSoldOut: with every spot pool empty in the cloud (and nothing
// marked yet), a claim planned as spot either fails with insufficient
// capacity naming the spot offerings tried, so the caller marks them and
// re-plans, or launches on-demand no dearer than the claim's cheapest
// on-demand option, as Create's contract allows.
func spotSoldOut(t *testing.T, env Env) {
	np := env.NodePool.DeepCopy()
	np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements,
		v1.NodeSelectorRequirementWithMinValues{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{v1.CapacityTypeSpot, v1.CapacityTypeOnDemand}})
	claim := solveOne(t, np, instanceTypesOf(t, env, np))
	got, err := env.Provider.Create(context.Background(), provisioning.NewNodeClaim(np, claim, "conformance-spot-sold-out"))
	if ice, ok := errors.AsType[*cloudprovider.InsufficientCapacityError](err); ok {
		for _, k := range ice.Offerings {
			if k.CapacityType != v1.CapacityTypeSpot {
				t.Errorf("offering %s failed: only spot is sold out", k)
			}
		}
		return
	}
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	checkLaunched(t, got)
	if ct := got.Labels[v1.CapacityTypeLabelKey]; ct != v1.CapacityTypeOnDemand {
		t.Fatalf("launched as %s with spot sold out", ct)
	}
	price, _ := cloudprovider.LaunchedPrice(got, instanceTypesOf(t, env, np))
	if cheapest := lowest(claim, v1.CapacityTypeOnDemand); price > cheapest {
		t.Errorf("on-demand fallback at %g, the claim's cheapest on-demand option costs %g", price, cheapest)
	}
}

func lifecycle(t *testing.T, env Env) {
	ctx := context.Background()
	p := env.Provider
	its := instanceTypesOf(t, env, env.NodePool)
	nc := provisioning.NewNodeClaim(env.NodePool, solveOne(t, env.NodePool, its), "conformance-lifecycle")
	first, err := p.Create(ctx, nc)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	checkLaunched(t, first)
	id := first.Status.ProviderID
	again, err := p.Create(ctx, nc)
	if err != nil {
		t.Fatalf("Create again with the same NodeClaim: %v", err)
	}
	if again.Status.ProviderID != id {
		t.Errorf("Create again with the same NodeClaim launched %s besides %s: Create must be idempotent by NodeClaim name", again.Status.ProviderID, id)
	}
	got, err := p.Get(ctx, id)
	if err != nil {
		t.Fatalf("Get %s: %v", id, err)
	}
	for _, key := range []string{v1.LabelInstanceType, v1.LabelZone, v1.CapacityTypeLabelKey} {
		if got.Labels[key] != first.Labels[key] {
			t.Errorf("Get says %s=%q, Create said %q", key, got.Labels[key], first.Labels[key])
		}
	}
	if n := count(t, p, id); n != 1 {
		t.Errorf("List holds %s %d times, want once", id, n)
	}
	gone := false
	for range 30 {
		err := p.Delete(ctx, first)
		if cloudprovider.IsNodeClaimNotFoundError(err) {
			gone = true
			break
		}
		if err != nil {
			t.Fatalf("Delete: %v", err)
		}
		env.Settle(t)
	}
	if !gone {
		t.Fatal("Delete never reported the instance gone")
	}
	if err := p.Delete(ctx, first); !cloudprovider.IsNodeClaimNotFoundError(err) {
		t.Errorf("Delete of a gone instance: %v, want a NodeClaimNotFoundError", err)
	}
	if _, err := p.Get(ctx, id); !cloudprovider.IsNodeClaimNotFoundError(err) {
		t.Errorf("Get of a gone instance: %v, want a NodeClaimNotFoundError", err)
	}
	if n := count(t, p, id); n != 0 {
		t.Errorf("List still holds %s", id)
	}
}

func insufficientCapacity(t *testing.T, env Env) {
	np := env.NodePool.DeepCopy()
	np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements,
		v1.NodeSelectorRequirementWithMinValues{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{v1.CapacityTypeSpot, v1.CapacityTypeOnDemand}})
	claim := solveOne(t, np, instanceTypesOf(t, env, np))
	_, err := env.Provider.Create(context.Background(), provisioning.NewNodeClaim(np, claim, "conformance-ice"))
	ice, ok := errors.AsType[*cloudprovider.InsufficientCapacityError](err)
	if !ok {
		t.Fatalf("Create with no capacity: %v, want an InsufficientCapacityError", err)
	}
	if len(ice.Offerings) == 0 {
		t.Fatal("the InsufficientCapacityError names no offering")
	}
	for _, k := range ice.Offerings {
		if !slices.ContainsFunc(claim.InstanceTypes, func(it *cloudprovider.InstanceType) bool { return it.Name == k.InstanceType }) {
			t.Errorf("offering %s is not one of the claim's instance types", k)
		}
	}
}

func interruptions(t *testing.T, env Env) {
	src, ok := cloudprovider.AsInterruptionSource(env.Provider)
	if !ok {
		t.Fatal("the provider has no interruption source")
	}
	if _, err := src.Interruptions(context.Background()); err != nil {
		t.Errorf("Interruptions: %v", err)
	}
}

func instanceTypesOf(t *testing.T, env Env, np *v1.NodePool) []*cloudprovider.InstanceType {
	t.Helper()
	its, err := env.Provider.GetInstanceTypes(context.Background(), np)
	if err != nil {
		t.Fatalf("GetInstanceTypes: %v", err)
	}
	if len(its) == 0 {
		t.Fatal("GetInstanceTypes returned none")
	}
	return its
}

// solveOne is the solver's NodeClaim for one pod of 1 CPU and 1Gi.
func solveOne(t *testing.T, np *v1.NodePool, its []*cloudprovider.InstanceType) *provisioning.NodeClaim {
	t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "conformance", Namespace: "default", UID: "conformance"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi"),
		}}}}}}
	r := provisioning.Solve(provisioning.Input{Pods: []*corev1.Pod{pod}, NodePools: []*v1.NodePool{np},
		InstanceTypes: map[string][]*cloudprovider.InstanceType{np.Name: its}})
	if len(r.NewNodeClaims) != 1 {
		t.Fatalf("the solver planned %d NodeClaims for one pod (unplaced %v)", len(r.NewNodeClaims), r.Unplaced)
	}
	return r.NewNodeClaims[0]
}

// nodeClaim is a NodeClaim of np's called name with requirements reqs.
func nodeClaim(np *v1.NodePool, name string, reqs []v1.NodeSelectorRequirementWithMinValues) *v1.NodeClaim {
	nc := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.NodePoolLabelKey: np.Name}}}
	nc.Spec.NodeClassRef = np.Spec.Template.Spec.NodeClassRef
	nc.Spec.Requirements = reqs
	return nc
}

// checkLaunched checks what every Create result carries.
func checkLaunched(t *testing.T, nc *v1.NodeClaim) {
	t.Helper()
	if nc.Status.ProviderID == "" {
		t.Error("no status.providerID")
	}
	for _, key := range []string{v1.LabelInstanceType, v1.LabelZone, v1.CapacityTypeLabelKey} {
		if nc.Labels[key] == "" {
			t.Errorf("no %s label", key)
		}
	}
	if nc.Labels[v1.CapacityTypeLabelKey] == v1.CapacityTypeReserved && nc.Labels[v1.LabelCapacityReservationID] == "" {
		t.Errorf("a reserved launch without the %s label", v1.LabelCapacityReservationID)
	}
	if nc.Status.Capacity.Cpu().Sign() <= 0 || nc.Status.Allocatable.Cpu().Sign() <= 0 {
		t.Errorf("capacity %v, allocatable %v: want both set", nc.Status.Capacity, nc.Status.Allocatable)
	}
}

// count is how many instances List returns with providerID id.
func count(t *testing.T, p cloudprovider.CloudProvider, id string) int {
	t.Helper()
	all, err := p.List(context.Background())
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	n := 0
	for _, nc := range all {
		if nc.Status.ProviderID == id {
			n++
		}
	}
	return n
}
