package provisioning_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/test"
)

func countClaims(r provisioning.Result) map[string]int {
	out := map[string]int{}
	for _, c := range r.NewNodeClaims {
		key := "spot/on-demand"
		if c.ReservationID != "" {
			key = "reserved:" + c.ReservationID
		}
		out[key]++
	}
	return out
}

func countUnplaced(r provisioning.Result) map[provisioning.Reason]int {
	out := map[provisioning.Reason]int{}
	for _, u := range r.Unplaced {
		out[u.Reason]++
	}
	return out
}

// Ten hostname-anti-affine pods against a one-slot reservation: one
// reserved claim, the rest on spot or on-demand.
func TestOneSlotReservationThenFallback(t *testing.T) {
	web := map[string]string{"app": "web"}
	in := provisioning.Input{
		Pods:          pods(10, "3", "1Gi", labelled(web), antiAffinity(corev1.LabelHostname, web)),
		NodePools:     []*v1.NodePool{nodePool("default")},
		InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": reservedTypes(1)},
	}
	r := provisioning.Solve(in)
	if diff := cmp.Diff(map[string]int{"reserved:cr-1": 1, "spot/on-demand": 9}, countClaims(r)); diff != "" {
		t.Errorf("claims (-want +got):\n%s", diff)
	}
	for _, c := range r.NewNodeClaims {
		ct := c.Requirements[v1.CapacityTypeLabelKey]
		if c.ReservationID != "" {
			if ct.Has(v1.CapacityTypeSpot) || !ct.Has(v1.CapacityTypeReserved) || c.InstanceTypes[0].Name != "m.xlarge" {
				t.Errorf("reserved claim %s on %s not pinned to its reservation", ct, c.InstanceTypes[0].Name)
			}
			continue
		}
		if ct.Has(v1.CapacityTypeReserved) {
			t.Errorf("unreserved claim may still launch into a reservation: %s", ct)
		}
	}
}

func TestReservedOnlyNodePoolWaitsWhenExhausted(t *testing.T) {
	web := map[string]string{"app": "web"}
	in := provisioning.Input{
		Pods:          pods(10, "3", "1Gi", labelled(web), antiAffinity(corev1.LabelHostname, web)),
		NodePools:     []*v1.NodePool{nodePool("default", requireCapacityTypes(v1.CapacityTypeReserved))},
		InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": reservedTypes(1)},
	}
	r := provisioning.Solve(in)
	if diff := cmp.Diff(map[string]int{"reserved:cr-1": 1}, countClaims(r)); diff != "" {
		t.Errorf("claims (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[provisioning.Reason]int{provisioning.ReasonReservationExhausted: 9}, countUnplaced(r)); diff != "" {
		t.Errorf("unplaced (-want +got):\n%s", diff)
	}

	in.Options.ReservationMode = provisioning.ReservationFallback
	r = provisioning.Solve(in)
	if len(r.Unplaced) != 0 || len(r.NewNodeClaims) != 10 {
		t.Errorf("fallback mode: %d claims, %d unplaced; want 10 claims", len(r.NewNodeClaims), len(r.Unplaced))
	}
}

// A reserved claim keeps taking pods after its reservation's last slot is
// booked: the slot is already its own.
func TestReservedClaimFillsUp(t *testing.T) {
	in := provisioning.Input{
		Pods:          pods(3, "1", "1Gi"),
		NodePools:     []*v1.NodePool{nodePool("default")},
		InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": reservedTypes(1)},
	}
	r := provisioning.Solve(in)
	if diff := cmp.Diff(map[string]int{"reserved:cr-1": 1}, countClaims(r)); diff != "" {
		t.Errorf("claims (-want +got):\n%s", diff)
	}
	if got := len(r.NewNodeClaims[0].Pods); got != 3 {
		t.Errorf("reserved claim holds %d pods, want 3", got)
	}
}

// requirements: [] allows every capacity type, tried reserved, spot,
// on-demand.
func TestCapacityTypeOrder(t *testing.T) {
	spotless := func() []*cloudprovider.InstanceType {
		its := small()
		for _, it := range its {
			for _, o := range it.Offerings {
				if o.CapacityType == v1.CapacityTypeSpot {
					o.Available = 0
				}
			}
		}
		return its
	}
	for _, tc := range []struct {
		name string
		its  []*cloudprovider.InstanceType
		want string
	}{
		{"a free reservation first", reservedTypes(5), v1.CapacityTypeReserved},
		{"then spot", reservedTypes(0), v1.CapacityTypeSpot},
		{"then on-demand", spotless(), v1.CapacityTypeOnDemand},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := provisioning.Solve(provisioning.Input{
				Pods:          pods(1, "3", "1Gi"),
				NodePools:     []*v1.NodePool{nodePool("default")},
				InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": tc.its},
			})
			if len(r.NewNodeClaims) != 1 {
				t.Fatalf("%d claims, unplaced %v", len(r.NewNodeClaims), r.Unplaced)
			}
			if got := launchCapacityType(r.NewNodeClaims[0]); got != tc.want {
				t.Errorf("launches as %s, want %s", got, tc.want)
			}
		})
	}
}

// launchCapacityType is what a cloud following the documented order would
// launch: the first allowed capacity type with an available offering on
// the claim's first instance type.
func launchCapacityType(c *provisioning.NodeClaim) string {
	ct := c.Requirements[v1.CapacityTypeLabelKey]
	for _, want := range []string{v1.CapacityTypeReserved, v1.CapacityTypeSpot, v1.CapacityTypeOnDemand} {
		if ct != nil && !ct.Has(want) {
			continue
		}
		for _, o := range c.InstanceTypes[0].Offerings {
			if o.CapacityType == want && o.IsAvailable() && o.CompatibleWith(c.Requirements) {
				return want
			}
		}
	}
	return ""
}

// Spot dearer than the cheapest on-demand option is never chosen: the
// on-demand-priced small type comes first, not the big type whose spot
// price is above it.
func TestSpotAboveCheapestOnDemandIsDropped(t *testing.T) {
	cheap := test.InstanceType(test.InstanceTypeOptions{Name: "c.large", CPU: 4, Memory: 8, Offerings: cloudprovider.Offerings{
		{Zone: "zone-a", CapacityType: v1.CapacityTypeOnDemand, Price: 0.10, Available: cloudprovider.Unlimited},
	}})
	pricySpot := test.InstanceType(test.InstanceTypeOptions{Name: "x.large", CPU: 4, Memory: 8, Offerings: cloudprovider.Offerings{
		{Zone: "zone-a", CapacityType: v1.CapacityTypeSpot, Price: 0.15, Available: cloudprovider.Unlimited},
		{Zone: "zone-a", CapacityType: v1.CapacityTypeOnDemand, Price: 0.50, Available: cloudprovider.Unlimited},
	}})
	r := provisioning.Solve(provisioning.Input{
		Pods:          pods(1, "1", "1Gi"),
		NodePools:     []*v1.NodePool{nodePool("default")},
		InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": {pricySpot, cheap}},
	})
	if len(r.NewNodeClaims) != 1 {
		t.Fatalf("%d claims", len(r.NewNodeClaims))
	}
	names := []string{}
	for _, it := range r.NewNodeClaims[0].InstanceTypes {
		names = append(names, it.Name)
	}
	if diff := cmp.Diff([]string{"c.large", "x.large"}, names); diff != "" {
		t.Errorf("option order (-want +got):\n%s", diff)
	}
}

// Options are truncated to the cheapest MaxInstanceTypes, but kept wide
// enough for minValues; a minValues no fitting set can meet is a reason.
func TestMinValues(t *testing.T) {
	var its []*cloudprovider.InstanceType
	for _, fam := range []string{"a", "b", "c"} {
		for i := range 10 {
			its = append(its, test.InstanceType(test.InstanceTypeOptions{Name: fam + "." + string(rune('0'+i)), CPU: int64(2 + i), Memory: 8, Family: fam, Price: float64(i+1) + map[string]float64{"a": 0, "b": 0.1, "c": 100}[fam]}))
		}
	}
	minFamilies := func(n int) func(*v1.NodePool) {
		return func(np *v1.NodePool) {
			np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{{
				Key: v1.LabelInstanceFamily, Operator: corev1.NodeSelectorOpIn, Values: []string{"a", "b", "c"}, MinValues: &n,
			}}
		}
	}
	families := func(c *provisioning.NodeClaim) map[string]int {
		out := map[string]int{}
		for _, it := range c.InstanceTypes {
			out[it.Requirements.Get(v1.LabelInstanceFamily).Any()]++
		}
		return out
	}

	r := provisioning.Solve(provisioning.Input{
		Pods: pods(1, "1", "1Gi"), NodePools: []*v1.NodePool{nodePool("default", minFamilies(3))},
		InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": its},
		Options:       provisioning.Options{MaxInstanceTypes: 4},
	})
	if len(r.NewNodeClaims) != 1 {
		t.Fatalf("%d claims, unplaced %v", len(r.NewNodeClaims), r.Unplaced)
	}
	if diff := cmp.Diff(map[string]int{"a": 2, "b": 1, "c": 1}, families(r.NewNodeClaims[0])); diff != "" {
		t.Errorf("families kept (-want +got):\n%s", diff)
	}

	r = provisioning.Solve(provisioning.Input{
		Pods: pods(1, "10", "1Gi"), NodePools: []*v1.NodePool{nodePool("default", minFamilies(3))},
		InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": its[:20]},
	})
	if diff := cmp.Diff(map[provisioning.Reason]int{provisioning.ReasonMinValuesUnsatisfiable: 1}, countUnplaced(r)); diff != "" {
		t.Errorf("unplaced (-want +got):\n%s", diff)
	}
}
