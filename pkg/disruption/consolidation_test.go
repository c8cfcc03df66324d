package disruption

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/scheduling"
	"github.com/capstan-dev/capstan/pkg/test"
)

// Prices in these tests: m5.n (and c5.n) has n cores, 2n GiB, costs 0.07n
// on demand and 0.028n as spot (test.InstanceType's formula).

// underutilized puts NodePool "default" under WhenEmptyOrUnderutilized,
// the policy consolidation acts under.
func underutilized(c *cluster) {
	c.pool().Spec.Disruption.ConsolidationPolicy = v1.ConsolidationPolicyWhenEmptyOrUnderutilized
}

// launched makes node (added if missing) an instance of it bought as
// capacity type ct in zone-a, within reservation when reserved: its
// NodeClaim and Node carry the labels its price is looked up by, and its
// allocatable is the type's.
func (c *cluster) launched(node string, it *cloudprovider.InstanceType, ct, reservation string) {
	if c.claim(node) == nil {
		c.node(node)
	}
	labels := map[string]string{v1.LabelInstanceType: it.Name, v1.LabelZone: "zone-a", v1.CapacityTypeLabelKey: ct}
	if reservation != "" {
		labels[v1.LabelCapacityReservationID] = reservation
	}
	nc, n := c.claim(node), c.nodeNamed(node)
	for k, v := range labels {
		nc.Labels[k] = v
		n.Labels[k] = v
	}
	n.Status.Allocatable = it.Allocatable()
	n.Status.Capacity = it.Capacity.DeepCopy()
}

// typeNamed is the instance type of its called name.
func typeNamed(its []*cloudprovider.InstanceType, name string) *cloudprovider.InstanceType {
	for _, it := range its {
		if it.Name == name {
			return it
		}
	}
	panic("no instance type " + name)
}

// reserve is its with m5.<size> rebuilt to offer, besides its on-demand
// and spot offerings, a reservation id in zone-a with slots free, at
// on-demand / 10^7 (as the sim cloud prices reservations).
func reserve(its []*cloudprovider.InstanceType, size int, id string, slots int) []*cloudprovider.InstanceType {
	out := slices.Clone(its)
	name := fmt.Sprintf("m5.%d", size)
	base := typeNamed(its, name)
	od := 0.0
	for _, o := range base.Offerings {
		if o.CapacityType == v1.CapacityTypeOnDemand {
			od = o.Price
		}
	}
	offerings := append(slices.Clone(base.Offerings),
		&cloudprovider.Offering{Zone: "zone-a", CapacityType: v1.CapacityTypeReserved, ReservationID: id, Price: od / 1e7, Available: slots})
	rebuilt := test.InstanceType(test.InstanceTypeOptions{Name: name, CPU: int64(size), Memory: 2 * int64(size), Family: "m5", Offerings: offerings})
	out[slices.Index(out, base)] = rebuilt
	return out
}

// typeNames are the instance types' names, in order.
func typeNames(its []*cloudprovider.InstanceType) []string {
	out := []string{}
	for _, it := range its {
		out = append(out, it.Name)
	}
	return out
}

// m5s are m5.from to m5.to, in order.
func m5s(from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprintf("m5.%d", i))
	}
	return out
}

func consolidationVerdict(m, node, msg string) Verdict {
	return Verdict{NodeClaim: "nc-" + node, Node: node, Method: m, Event: EventUnconsolidatable, Message: msg}
}

func single(node, msg string) Verdict {
	return consolidationVerdict("SingleNodeConsolidation", node, msg)
}

// wantReplacement describes a command's replacement.
type wantReplacement struct {
	pods  []string
	types []string
	// allows are the capacity types (of reserved, spot, on-demand) its
	// requirements allow.
	allows       []string
	capacityType string
	reservation  string
}

func describeReplacement(r *provisioning.NodeClaim) wantReplacement {
	pods := podNames(r.Pods)
	slices.Sort(pods)
	got := wantReplacement{pods: pods, types: typeNames(r.InstanceTypes), capacityType: r.CapacityType, reservation: r.ReservationID}
	for _, ct := range []string{v1.CapacityTypeReserved, v1.CapacityTypeSpot, v1.CapacityTypeOnDemand} {
		if r.Requirements.Get(v1.CapacityTypeLabelKey).Has(ct) {
			got.allows = append(got.allows, ct)
		}
	}
	return got
}

// checkCommand checks what every consolidation command must satisfy: one
// replacement at most, every one of whose instance types costs less,
// launched as any offering its requirements allow, than the candidates
// together; and the replacement's instance-type requirement names
// exactly its instance types.
func checkCommand(t *testing.T, cmd Command) {
	t.Helper()
	if len(cmd.Replacements) > 1 {
		t.Errorf("%d replacements, consolidation launches one at most", len(cmd.Replacements))
	}
	price := 0.0
	for _, c := range cmd.Candidates {
		if !c.Priced {
			t.Errorf("candidate %s has no price", c.Node.Name)
		}
		price += c.Price
	}
	for _, r := range cmd.Replacements {
		if len(r.InstanceTypes) == 0 {
			t.Errorf("a replacement without instance types")
		}
		for _, it := range r.InstanceTypes {
			worst, ok := WorstPrice(it, r.Requirements)
			if !ok || worst >= price {
				t.Errorf("replacement type %s costs up to %v (%v), not less than the candidates' %v", it.Name, worst, ok, price)
			}
		}
		want := typeNames(r.InstanceTypes)
		slices.Sort(want)
		got := r.Requirements.Get(v1.LabelInstanceType).Values()
		slices.Sort(got)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("instance-type requirement against the instance types (-types +requirement):\n%s", diff)
		}
	}
}

type consolidationCase struct {
	name string
	// setup launches the nodes and binds their pods; NodePool "default"
	// is under WhenEmptyOrUnderutilized with consolidateAfter 0s and a
	// budget of 100%.
	setup func(c *cluster)
	// its are the NodePool's instance types, m5 when nil.
	its  []*cloudprovider.InstanceType
	gate bool
	// now is t0 + 1h when zero.
	now          time.Time
	want         []string
	replacements []wantReplacement
	verdicts     []Verdict
	eligible     int
}

func runConsolidation(t *testing.T, m Method, tc consolidationCase) {
	t.Helper()
	c := newCluster()
	underutilized(c)
	tc.setup(c)
	its := tc.its
	if its == nil {
		its = m5
	}
	c.snapshot(its...)
	now := tc.now
	if now.IsZero() {
		now = t0.Add(time.Hour)
	}
	d := Plan(c.in, []Method{m}, now)
	checkPlanned(t, d, m, tc.want, tc.replacements, tc.verdicts, tc.eligible)
}

// checkPlanned checks a method's planning round: the
// command (its candidates and replacements), the verdicts and how many
// nodes it found eligible.
func checkPlanned(t *testing.T, d Decision, m Method, want []string, replacements []wantReplacement, verdicts []Verdict, eligible int) {
	t.Helper()
	if d.Found != (len(want) > 0) {
		t.Fatalf("command %v (%v, verdicts %+v), want one for %v", d.Found, names(d.Command.Candidates), d.Verdicts, want)
	}
	if d.Found {
		if d.Command.Method != m.Name() || d.Command.Reason != m.Reason() {
			t.Errorf("method %s reason %s, want %s and %s", d.Command.Method, d.Command.Reason, m.Name(), m.Reason())
		}
		if diff := cmp.Diff(want, names(d.Command.Candidates)); diff != "" {
			t.Errorf("disrupted (-want +got):\n%s", diff)
		}
		// Only Underutilized commands must save: a return to an earlier
		// term (Drifted) may cost more.
		if m.Reason() == v1.DisruptionReasonUnderutilized {
			checkCommand(t, d.Command)
		}
	}
	got := []wantReplacement{}
	for _, r := range d.Command.Replacements {
		got = append(got, describeReplacement(r))
	}
	if replacements == nil {
		replacements = []wantReplacement{}
	}
	if diff := cmp.Diff(replacements, got, cmp.AllowUnexported(wantReplacement{})); diff != "" {
		t.Errorf("replacements (-want +got):\n%s", diff)
	}
	sameVerdicts(t, verdicts, d.Verdicts)
	if d.Eligible[m.Name()] != eligible {
		t.Errorf("eligible %d, want %d", d.Eligible[m.Name()], eligible)
	}
}

var (
	onDemandAndSpot = []string{v1.CapacityTypeSpot, v1.CapacityTypeOnDemand}
	spotOnly        = []string{v1.CapacityTypeSpot}
	onDemandOnly    = []string{v1.CapacityTypeOnDemand}
	reservedOnly    = []string{v1.CapacityTypeReserved}
)

// poolCapacityTypes restricts NodePool "default" to the capacity types.
func poolCapacityTypes(c *cluster, cts ...string) {
	c.pool().Spec.Template.Spec.Requirements = append(c.pool().Spec.Template.Spec.Requirements,
		v1.NodeSelectorRequirementWithMinValues{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: cts})
}

func m5n(n int) *cloudprovider.InstanceType { return m5[n-1] }

func TestSingleNodeConsolidation(t *testing.T) {
	od, spot := v1.CapacityTypeOnDemand, v1.CapacityTypeSpot
	// cheapOnlyAsSpot: x.4 is the cheapest to launch (as spot) but dearer
	// than big.8 on demand; y.4 is cheaper either way.
	cheapOnlyAsSpot := []*cloudprovider.InstanceType{
		test.InstanceType(test.InstanceTypeOptions{Name: "big.8", CPU: 8, Memory: 16, Price: 0.30}),
		test.InstanceType(test.InstanceTypeOptions{Name: "x.4", CPU: 4, Memory: 8, Offerings: cloudprovider.Offerings{
			{Zone: "zone-a", CapacityType: od, Price: 0.40, Available: cloudprovider.Unlimited},
			{Zone: "zone-a", CapacityType: spot, Price: 0.05, Available: cloudprovider.Unlimited},
		}}),
		test.InstanceType(test.InstanceTypeOptions{Name: "y.4", CPU: 4, Memory: 8, Price: 0.25}),
	}
	c5, c5Wide := test.InstanceTypeSeries("c5", 24), test.InstanceTypeSeries("c5", 40)
	c5Range := func(from, to int) []string {
		var out []string
		for i := from; i <= to; i++ {
			out = append(out, fmt.Sprintf("c5.%d", i))
		}
		return out
	}
	// The 15 cheapest of the 18 types cheaper than a spot c5.20
	// (consolidation.go computeSpotToSpotConsolidation: launched with
	// only those, the new node is among the cheapest 15 and does not
	// qualify again at once).
	c5s := c5Range(2, 16)
	cases := []consolidationCase{
		{name: "delete: its pods fit the others' free capacity", setup: func(c *cluster) {
			c.launched("a", m5n(4), od, "")
			c.launched("b", m5n(4), od, "")
			c.pod("web-a", "a", requests("1"))
			c.pod("web-b1", "b", requests("1"))
			c.pod("web-b2", "b", requests("1"))
		}, want: []string{"a"}, eligible: 2},
		{name: "replace: a large underused node by one cheaper node", setup: func(c *cluster) {
			c.launched("a", m5n(8), od, "")
			c.pod("web", "a", requests("1"))
		}, want: []string{"a"}, replacements: []wantReplacement{
			// m5.1 is too small, m5.8 no cheaper.
			{pods: []string{"default/web"}, types: m5s(2, 7), allows: onDemandAndSpot, capacityType: spot},
		}, eligible: 1},
		{name: "the others' free capacity first, a replacement for the rest", setup: func(c *cluster) {
			c.launched("a", m5n(8), od, "")
			c.launched("b", m5n(4), od, "")
			c.pod("small", "a", requests("1"))
			c.pod("large", "a", requests("3"))
			c.pod("fill-b1", "b", requests("1.4"))
			c.pod("fill-b2", "b", requests("1.4"))
			c.pod("fill-b3", "b", requests("0.1"))
		}, want: []string{"a"}, replacements: []wantReplacement{
			{pods: []string{"default/large"}, types: m5s(4, 7), allows: onDemandAndSpot, capacityType: spot},
		}, eligible: 2},
		{name: "not cheaper", setup: func(c *cluster) {
			c.launched("a", m5n(2), od, "")
			c.pod("web", "a", requests("1.5"))
		}, verdicts: []Verdict{single("a", "can't replace with a lower-priced node")}, eligible: 1},
		{name: "cheaper only as spot: priced at its on-demand worst", setup: func(c *cluster) {
			c.launched("a", m5n(4), od, "")
			c.pod("web", "a", requests("3"))
		}, verdicts: []Verdict{single("a", "can't replace with a lower-priced node")}, eligible: 1},
		{name: "a type cheaper only as spot is dropped, a cheaper one kept", its: cheapOnlyAsSpot, setup: func(c *cluster) {
			c.launched("a", cheapOnlyAsSpot[0], od, "")
			c.pod("web", "a", requests("3"))
		}, want: []string{"a"}, replacements: []wantReplacement{
			{pods: []string{"default/web"}, types: []string{"y.4"}, allows: onDemandAndSpot, capacityType: spot},
		}, eligible: 1},
		{name: "pods that fit nowhere", setup: func(c *cluster) {
			c.launched("a", m5n(8), od, "")
			c.pod("huge", "a", requests("32"))
		}, verdicts: []Verdict{single("a", "not all pods would schedule, pod default/huge: *")}, eligible: 1},
		{name: "an empty node is Emptiness's", setup: func(c *cluster) {
			c.launched("a", m5n(8), od, "")
			c.pod("logs", "a", daemon)
		}, eligible: 0},
		{name: "WhenEmpty: busy nodes are not considered", setup: func(c *cluster) {
			c.pool().Spec.Disruption.ConsolidationPolicy = v1.ConsolidationPolicyWhenEmpty
			c.launched("a", m5n(8), od, "")
			c.pod("web", "a", requests("1"))
		}, eligible: 0},
		{name: "before consolidateAfter: not considered", setup: func(c *cluster) {
			c.pool().Spec.Disruption.ConsolidateAfter = v1.MustParseNillableDuration("30m")
			c.launched("a", m5n(8), od, "")
			c.pod("web", "a", requests("1"))
			c.claim("a").Status.LastPodEventTime = metav1.NewTime(t0.Add(45 * time.Minute))
		}, eligible: 0},
		{name: "consolidateAfter: Never", setup: func(c *cluster) {
			c.pool().Spec.Disruption.ConsolidateAfter = v1.MustParseNillableDuration(v1.Never)
			c.launched("a", m5n(8), od, "")
			c.pod("web", "a", requests("1"))
		}, eligible: 0},
		{name: "after consolidateAfter", setup: func(c *cluster) {
			c.pool().Spec.Disruption.ConsolidateAfter = v1.MustParseNillableDuration("30m")
			c.launched("a", m5n(8), od, "")
			c.pod("web", "a", requests("1"))
			c.claim("a").Status.LastPodEventTime = metav1.NewTime(t0.Add(30 * time.Minute))
		}, want: []string{"a"}, replacements: []wantReplacement{
			{pods: []string{"default/web"}, types: m5s(2, 7), allows: onDemandAndSpot, capacityType: spot},
		}, eligible: 1},
		{name: "a do-not-disrupt pod blocks it", setup: func(c *cluster) {
			c.launched("a", m5n(8), od, "")
			c.pod("web", "a", requests("1"), doNotDisrupt)
		}, verdicts: []Verdict{single("a", "pod default/web has do-not-disrupt")}, eligible: 1},
		{name: "do-not-disrupt on the node blocks it", setup: func(c *cluster) {
			c.launched("a", m5n(8), od, "")
			c.pod("web", "a", requests("1"))
			c.nodeNamed("a").Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: "true"}
		}, verdicts: []Verdict{single("a", "node a has do-not-disrupt")}, eligible: 1},
		{name: "a PDB that allows no eviction blocks it", setup: func(c *cluster) {
			c.launched("a", m5n(8), od, "")
			c.pod("web", "a", requests("1"))
			c.pdb("web-pdb", 0)
		}, verdicts: []Verdict{single("a", "pdb default/web-pdb prevents pod evictions")}, eligible: 1},
		{name: "a budget of 0 for Underutilized", setup: func(c *cluster) {
			c.pool().Spec.Disruption.Budgets = []v1.Budget{{Nodes: "0", Reasons: []v1.DisruptionReason{v1.DisruptionReasonUnderutilized}}, {Nodes: "100%"}}
			c.launched("a", m5n(8), od, "")
			c.pod("web", "a", requests("1"))
		}, verdicts: []Verdict{single("a", "disruption budget of 0 for Underutilized")}, eligible: 1},
		{name: "an Empty budget of 0 does not hold it", setup: func(c *cluster) {
			c.pool().Spec.Disruption.Budgets = []v1.Budget{{Nodes: "0", Reasons: []v1.DisruptionReason{v1.DisruptionReasonEmpty}}, {Nodes: "100%"}}
			c.launched("a", m5n(4), od, "")
			c.launched("b", m5n(4), od, "")
			c.pod("web-a", "a", requests("1"))
			c.pod("web-b1", "b", requests("1"))
			c.pod("web-b2", "b", requests("1"))
		}, want: []string{"a"}, eligible: 2},
		{name: "a node whose price is not known", setup: func(c *cluster) {
			c.node("a")
			c.capacity("a", "8")
			c.pod("web", "a", requests("1"))
		}, verdicts: []Verdict{single("a", "the node's price is not known")}, eligible: 1},
		{name: "the first that can go, in SavingsRatio order", setup: func(c *cluster) {
			c.launched("a", m5n(8), od, "")
			c.launched("b", m5n(8), od, "")
			// a, as dear with fewer pods, is tried first: its pod fits
			// nowhere and no cheaper node takes it.
			c.pod("web-a", "a", requests("7.5"))
			c.pod("web-b1", "b", requests("1.2"))
			c.pod("web-b2", "b", requests("5.5"))
		}, want: []string{"b"}, replacements: []wantReplacement{
			{pods: []string{"default/web-b1", "default/web-b2"}, types: m5s(7, 7), allows: onDemandAndSpot, capacityType: spot},
		}, verdicts: []Verdict{single("a", "can't replace with a lower-priced node")}, eligible: 2},

		// Spot.
		{name: "a spot node may always be deleted", setup: func(c *cluster) {
			c.launched("a", m5n(4), spot, "")
			c.launched("b", m5n(4), spot, "")
			c.pod("web-a", "a", requests("1"))
			c.pod("web-b1", "b", requests("1"))
			c.pod("web-b2", "b", requests("1"))
		}, want: []string{"a"}, eligible: 2},
		{name: "spot to spot with the gate off", setup: func(c *cluster) {
			c.launched("a", m5n(8), spot, "")
			c.pod("web", "a", requests("1"))
		}, verdicts: []Verdict{single("a", "SpotToSpotConsolidation is disabled, can't replace a spot node with a spot node")}, eligible: 1},
		{name: "spot to spot with fewer than 15 cheaper types", gate: true, setup: func(c *cluster) {
			c.launched("a", m5n(8), spot, "")
			c.pod("web", "a", requests("1"))
		}, verdicts: []Verdict{single("a", "SpotToSpotConsolidation requires 15 cheaper instance type options than the current candidate to consolidate, got 6")}, eligible: 1},
		{name: "spot to spot with 15 or more cheaper types: restricted to spot", gate: true, its: c5, setup: func(c *cluster) {
			c.launched("a", typeNamed(c5, "c5.20"), spot, "")
			c.pod("web", "a", requests("1"))
		}, want: []string{"a"}, replacements: []wantReplacement{
			{pods: []string{"default/web"}, types: c5s, allows: spotOnly, capacityType: spot},
		}, eligible: 1},
		{name: "spot to spot to types cheaper only as spot", gate: true, its: c5Wide, setup: func(c *cluster) {
			c.launched("a", typeNamed(c5Wide, "c5.30"), spot, "")
			c.pod("web", "a", requests("12"))
		}, want: []string{"a"}, replacements: []wantReplacement{
			// 0.364 to 0.812 as spot, below the spot c5.30's 0.84; 0.91
			// and up on demand: the cheapest 15 of those 17.
			{pods: []string{"default/web"}, types: c5Range(13, 27), allows: spotOnly, capacityType: spot},
		}, eligible: 1},
		// With minValues, as many of the cheapest as they need when more
		// than 15.
		{name: "spot to spot keeps what minValues needs beyond 15", gate: true, its: c5, setup: func(c *cluster) {
			c.pool().Spec.Template.Spec.Requirements = append(c.pool().Spec.Template.Spec.Requirements,
				v1.NodeSelectorRequirementWithMinValues{Key: v1.LabelInstanceType, Operator: corev1.NodeSelectorOpExists, MinValues: ptr.To(17)})
			c.launched("a", typeNamed(c5, "c5.20"), spot, "")
			c.pod("web", "a", requests("1"))
		}, want: []string{"a"}, replacements: []wantReplacement{
			{pods: []string{"default/web"}, types: c5Range(2, 18), allows: spotOnly, capacityType: spot},
		}, eligible: 1},
		{name: "spot to spot never to a type cheaper only on demand", gate: true, setup: func(c *cluster) {
			c.launched("a", m5n(2), spot, "")
			c.pod("web", "a", requests("1.5"))
		}, verdicts: []Verdict{single("a", "can't replace with a lower-priced node")}, eligible: 1},
		{name: "an on-demand node may be replaced by spot without the gate", setup: func(c *cluster) {
			poolCapacityTypes(c, spot)
			c.launched("a", m5n(8), od, "")
			c.pod("web", "a", requests("1"))
		}, want: []string{"a"}, replacements: []wantReplacement{
			{pods: []string{"default/web"}, types: m5s(2, 8), allows: spotOnly, capacityType: spot},
		}, eligible: 1},
		{name: "a spot node may be replaced by a cheaper on-demand one without the gate", setup: func(c *cluster) {
			poolCapacityTypes(c, od)
			c.launched("a", m5n(8), spot, "")
			c.pod("web", "a", requests("1"))
		}, want: []string{"a"}, replacements: []wantReplacement{
			// 0.14 and 0.21 on demand, below the spot m5.8's 0.224.
			{pods: []string{"default/web"}, types: m5s(2, 3), allows: onDemandOnly, capacityType: od},
		}, eligible: 1},

		// Reservations.
		{name: "an on-demand node moves into a free reservation", its: reserve(m5, 2, "cr-1", 1), setup: func(c *cluster) {
			c.launched("a", m5n(4), od, "")
			c.pod("web", "a", requests("1"))
		}, want: []string{"a"}, replacements: []wantReplacement{
			{pods: []string{"default/web"}, types: []string{"m5.2"}, allows: reservedOnly, capacityType: v1.CapacityTypeReserved, reservation: "cr-1"},
		}, eligible: 1},
		{name: "a large reserved node by a smaller reserved one", its: reserve(reserve(m5, 8, "cr-big", 0), 2, "cr-small", 1), setup: func(c *cluster) {
			c.launched("a", m5n(8), v1.CapacityTypeReserved, "cr-big")
			c.pod("web", "a", requests("1"))
		}, want: []string{"a"}, replacements: []wantReplacement{
			{pods: []string{"default/web"}, types: []string{"m5.2"}, allows: reservedOnly, capacityType: v1.CapacityTypeReserved, reservation: "cr-small"},
		}, eligible: 1},
		{name: "a reserved node is not replaced by unreserved capacity", its: reserve(m5, 8, "cr-big", 0), setup: func(c *cluster) {
			c.launched("a", m5n(8), v1.CapacityTypeReserved, "cr-big")
			c.pod("web", "a", requests("1"))
		}, verdicts: []Verdict{single("a", "can't replace with a lower-priced node")}, eligible: 1},
		{name: "a full reservation is not over-booked", its: reserve(m5, 2, "cr-1", 0), setup: func(c *cluster) {
			c.launched("a", m5n(4), od, "")
			c.pod("web", "a", requests("1"))
		}, want: []string{"a"}, replacements: []wantReplacement{
			{pods: []string{"default/web"}, types: m5s(2, 3), allows: onDemandAndSpot, capacityType: spot},
		}, eligible: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			runConsolidation(t, SingleNodeConsolidation{SpotToSpot: tc.gate}, tc)
		})
	}
}

func TestMultiNodeConsolidation(t *testing.T) {
	od, spot := v1.CapacityTypeOnDemand, v1.CapacityTypeSpot
	// underused: a, b and c, on-demand (or ct) m5.4s running a 1-core pod
	// each.
	underused := func(c *cluster, ct string) {
		for _, n := range []string{"a", "b", "c"} {
			c.launched(n, m5n(4), ct, "")
			c.pod("web-"+n, n, requests("1"))
		}
	}
	// busier: the same with 1.5-core pods, two of which need more than
	// another's room.
	busier := func(c *cluster, ct string) {
		for _, n := range []string{"a", "b", "c"} {
			c.launched(n, m5n(4), ct, "")
			c.pod("web-"+n, n, requests("1.5"))
		}
	}
	// twoSmall: a and b, m5.2s of capacity type ct, running three
	// half-core pods between them.
	twoSmall := func(c *cluster, ct string) {
		for _, n := range []string{"a", "b"} {
			c.launched(n, m5n(2), ct, "")
		}
		c.pod("web-a", "a", requests("0.5"))
		c.pod("web-b1", "b", requests("0.5"))
		c.pod("web-b2", "b", requests("0.5"))
	}
	// fuller: the same with 2.5-core pods, too many for another's room.
	fuller := func(c *cluster, ct string) {
		for _, n := range []string{"a", "b", "c"} {
			c.launched(n, m5n(4), ct, "")
			c.pod("web-"+n, n, requests("2.5"))
		}
	}
	three := []string{"default/web-a", "default/web-b", "default/web-c"}
	cases := []consolidationCase{
		// Three m5.4s onto one m5.4 to m5.8 is no move (the reference's
		// filterOutSameInstanceType): a and b are deleted, their pods
		// moving to c.
		{name: "three underused nodes: two deleted, not merged onto their own type", setup: func(c *cluster) { underused(c, od) },
			want: []string{"a", "b"}, eligible: 3},
		{name: "three nodes onto one cheaper node", setup: func(c *cluster) { busier(c, od) },
			want: []string{"a", "b", "c"}, replacements: []wantReplacement{
				// 4.5 cores need an m5.5: no candidate's type.
				{pods: three, types: m5s(5, 8), allows: onDemandAndSpot, capacityType: spot},
			}, eligible: 3},
		{name: "the longest prefix that consolidates", setup: func(c *cluster) {
			underused(c, od)
			// d, saving least per pod moved (0.56/5 against 0.28/2),
			// would need a second node.
			c.launched("d", m5n(8), od, "")
			for i := range 4 {
				c.pod(fmt.Sprintf("big-d%d", i), "d", requests("1.5"))
			}
		}, want: []string{"a", "b", "c"}, replacements: []wantReplacement{
			// web-a fits d's free capacity; the m5.3 alone is cheaper
			// than a, b or c, m5.4s.
			{pods: three[1:], types: m5s(3, 3), allows: onDemandAndSpot, capacityType: spot},
		}, eligible: 4},
		{name: "the NodePool's budget caps the prefix", setup: func(c *cluster) {
			c.pool().Spec.Disruption.Budgets = []v1.Budget{{Nodes: "2"}}
			underused(c, od)
		}, want: []string{"a", "b"}, eligible: 3},
		{name: "the budget goes to the dearest of equally disruptive nodes", setup: func(c *cluster) {
			c.pool().Spec.Disruption.Budgets = []v1.Budget{{Nodes: "2"}}
			underused(c, od)
			c.launched("c", m5n(8), od, "")
		}, want: []string{"c", "a"}, eligible: 3},
		{name: "one candidate is single-node consolidation's", setup: func(c *cluster) {
			c.launched("a", m5n(8), od, "")
			c.pod("web", "a", requests("1"))
		}, eligible: 1},
		{name: "blocked nodes are left out, without verdicts", setup: func(c *cluster) {
			underused(c, od)
			c.pod("keep", "a", doNotDisrupt)
		}, want: []string{"b", "c"}, eligible: 3},
		{name: "spot nodes that need a replacement, the gate off: no command, no verdicts", setup: func(c *cluster) { fuller(c, spot) }, eligible: 3},
		{name: "spot nodes onto one spot node needs no 15 types", gate: true, setup: func(c *cluster) { busier(c, spot) },
			want: []string{"a", "b", "c"}, replacements: []wantReplacement{
				// 0.14 to 0.224 as spot, below the three's 0.336.
				{pods: three, types: m5s(5, 8), allows: spotOnly, capacityType: spot},
			}, eligible: 3},
		{name: "spot nodes onto one node cheaper only as spot", gate: true, setup: func(c *cluster) { fuller(c, spot) },
			want: []string{"a", "b", "c"}, replacements: []wantReplacement{
				// 0.224 as spot, below the three's 0.336; 0.56 on demand.
				{pods: three, types: m5s(8, 8), allows: spotOnly, capacityType: spot},
			}, eligible: 3},
		// multinodeconsolidation.go filterOutSameInstanceType and its test
		// "won't merge 2 nodes into 1 of the same type": merging a and b
		// onto one m5.2 is deleting one of them with more disruption.
		{name: "two nodes onto one of their own type: no command", setup: func(c *cluster) { twoSmall(c, od) }, eligible: 2},
		{name: "two nodes onto one of their own type, on spot: no command", gate: true, setup: func(c *cluster) { twoSmall(c, spot) }, eligible: 2},
		// The filter's second example: only types cheaper than the
		// cheapest candidate of a type among the options are kept.
		{name: "a replacement only of types cheaper than a candidate of a type among them", setup: func(c *cluster) {
			c.launched("a", m5n(8), od, "")
			c.launched("b", m5n(8), od, "")
			c.launched("c", m5n(3), od, "")
			c.pod("web-a", "a", requests("0.5"))
			c.pod("web-b", "b", requests("0.5"))
			c.pod("web-c", "c", requests("0.5"))
		}, want: []string{"a", "b", "c"}, replacements: []wantReplacement{
			{pods: []string{"default/web-a", "default/web-b", "default/web-c"}, types: m5s(2, 2), allows: onDemandAndSpot, capacityType: spot},
		}, eligible: 3},
		{name: "spot nodes deleted without the gate", setup: func(c *cluster) {
			underused(c, spot)
			c.launched("d", m5n(8), spot, "")
			for i := range 4 {
				c.pod(fmt.Sprintf("fill-d%d", i), "d", requests("1"))
			}
		}, want: []string{"a", "b", "c"}, eligible: 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			runConsolidation(t, MultiNodeConsolidation{SpotToSpot: tc.gate}, tc)
		})
	}
}

// Candidates are taken by SavingsRatio, highest first: the node's price
// over 1 plus its pods' positive eviction costs, as the reference's v1.14
// sortCandidates (balanced_scoring_test.go, "should sort non-Balanced
// candidates by savings ratio descending"): fewer pods, lower deletion
// cost and priority, dearer nodes first; expiry no longer weighs; equal
// ratios by name.
func TestConsolidationOrder(t *testing.T) {
	deletionCost := func(n int64) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Annotations = map[string]string{corev1.PodDeletionCost: strconv.FormatInt(n, 10)}
		}
	}
	priority := func(n int32) func(*corev1.Pod) {
		return func(p *corev1.Pod) { p.Spec.Priority = ptr.To(n) }
	}
	pods := func(c *cluster, node string, n int, mods ...func(*corev1.Pod)) {
		for i := range n {
			c.pod(fmt.Sprintf("%s-%d", node, i), node, mods...)
		}
	}
	expiring := func(c *cluster, node string, created time.Time) {
		nc := c.claim(node)
		nc.CreationTimestamp = metav1.NewTime(created)
		nc.Spec.ExpireAfter = v1.MustParseNillableDuration("720h")
	}
	cases := []struct {
		name  string
		setup func(*cluster)
		want  []string
	}{
		{"fewer pods first", func(c *cluster) {
			pods(c, "a", 3)
			pods(c, "b", 1)
			pods(c, "c", 2)
		}, []string{"b", "c", "a"}},
		{"names break ties", func(c *cluster) {
			pods(c, "c", 1)
			pods(c, "b", 1)
			pods(c, "a", 1)
		}, []string{"a", "b", "c"}},
		{"the dearer of equally disruptive nodes first", func(c *cluster) {
			c.launched("c", m5n(8), v1.CapacityTypeOnDemand, "")
			c.launched("a", m5n(2), v1.CapacityTypeOnDemand, "")
			pods(c, "a", 1)
			pods(c, "b", 1)
			pods(c, "c", 1)
		}, []string{"c", "b", "a"}},
		{"a node twice as dear with two pods saves more per pod moved", func(c *cluster) {
			c.launched("a", m5n(8), v1.CapacityTypeOnDemand, "")
			pods(c, "a", 2)
			pods(c, "b", 1)
			pods(c, "c", 1)
		}, []string{"a", "b", "c"}},
		{"a node twice as dear with four pods waits", func(c *cluster) {
			c.launched("a", m5n(8), v1.CapacityTypeOnDemand, "")
			pods(c, "a", 4)
			pods(c, "b", 1)
			pods(c, "c", 1)
		}, []string{"b", "c", "a"}},
		{"a high pod-deletion-cost makes a node dearer", func(c *cluster) {
			pods(c, "a", 1, deletionCost(1<<28))
			pods(c, "b", 2)
			pods(c, "c", 2)
		}, []string{"b", "c", "a"}},
		{"a negative pod-deletion-cost makes it cheaper", func(c *cluster) {
			pods(c, "a", 1)
			pods(c, "b", 1)
			pods(c, "c", 2, deletionCost(-(1 << 27)))
		}, []string{"c", "a", "b"}},
		{"a higher priority makes a node dearer", func(c *cluster) {
			pods(c, "a", 1, priority(1<<26))
			pods(c, "b", 2)
			pods(c, "c", 2)
		}, []string{"b", "c", "a"}},
		// A pod's cost is clamped to 10: a critical pod weighs as ten.
		{"priority is bounded: one critical pod weighs as ten", func(c *cluster) {
			pods(c, "c", 1, priority(2000001000))
			pods(c, "b", 12)
			pods(c, "a", 10)
		}, []string{"a", "c", "b"}},
		{"pods that cost nothing to evict weigh nothing", func(c *cluster) {
			pods(c, "a", 1)
			pods(c, "b", 3, deletionCost(-(1 << 28)))
		}, []string{"b", "a"}},
		{"a node near its expireAfter no longer goes first", func(c *cluster) {
			pods(c, "a", 1)
			pods(c, "b", 1)
			pods(c, "c", 3)
			for _, n := range []string{"a", "b"} {
				expiring(c, n, t0)
			}
			expiring(c, "c", t0.Add(-710*time.Hour))
		}, []string{"a", "b", "c"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster()
			underutilized(c)
			for _, n := range []string{"a", "b", "c"} {
				c.launched(n, m5n(4), v1.CapacityTypeOnDemand, "")
			}
			tc.setup(c)
			c.snapshot(m5...)
			now := t0.Add(time.Hour)
			var out Outcome
			got := consolidation{}.eligible(SingleNodeConsolidation{}, Env{Candidates: Candidates(c.in, now), Allowed: map[string]int{"default": 3}, Now: now}, &out)
			if diff := cmp.Diff(tc.want, names(got)); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
		})
	}
}

// Plan runs Emptiness before consolidation, and multi-node consolidation
// before single-node; the gate reaches both consolidation methods.
func TestConsolidationPlanOrder(t *testing.T) {
	od := v1.CapacityTypeOnDemand
	for _, g := range []bool{false, true} {
		for _, m := range Methods(Gates{SpotToSpotConsolidation: g}) {
			switch m := m.(type) {
			case MultiNodeConsolidation:
				if m.SpotToSpot != g {
					t.Errorf("gate %v: multi-node has SpotToSpot %v", g, m.SpotToSpot)
				}
			case SingleNodeConsolidation:
				if m.SpotToSpot != g {
					t.Errorf("gate %v: single-node has SpotToSpot %v", g, m.SpotToSpot)
				}
			}
		}
	}
	cases := []struct {
		name   string
		setup  func(*cluster)
		method string
		want   []string
	}{
		{"an empty node: Emptiness first", func(c *cluster) {
			c.launched("a", m5n(4), od, "")
			for _, n := range []string{"b", "c"} {
				c.launched(n, m5n(4), od, "")
				c.pod("web-"+n, n, requests("1"))
			}
		}, "Emptiness", []string{"a"}},
		{"several can go: multi-node before single-node", func(c *cluster) {
			for _, n := range []string{"a", "b", "c"} {
				c.launched(n, m5n(4), od, "")
				c.pod("web-"+n, n, requests("1"))
			}
			// Not all three onto one of their own m5.4s: two deleted.
		}, "MultiNodeConsolidation", []string{"a", "b"}},
		{"one can go: single-node", func(c *cluster) {
			c.launched("a", m5n(8), od, "")
			c.pod("web", "a", requests("1"))
		}, "SingleNodeConsolidation", []string{"a"}},
		{"under WhenEmpty only Emptiness acts", func(c *cluster) {
			c.pool().Spec.Disruption.ConsolidationPolicy = v1.ConsolidationPolicyWhenEmpty
			c.launched("a", m5n(8), od, "")
			c.pod("web", "a", requests("1"))
		}, "", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster()
			underutilized(c)
			tc.setup(c)
			c.snapshot(m5...)
			d := Plan(c.in, Methods(Gates{Drift: true}), t0.Add(time.Hour))
			if d.Found != (tc.method != "") {
				t.Fatalf("command %v (%+v), want %q", d.Found, d.Command, tc.method)
			}
			if !d.Found {
				return
			}
			if d.Command.Method != tc.method {
				t.Errorf("method %s, want %s", d.Command.Method, tc.method)
			}
			if diff := cmp.Diff(tc.want, names(d.Command.Candidates)); diff != "" {
				t.Errorf("disrupted (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWorstPriceAndCheaper(t *testing.T) {
	od, spot := v1.CapacityTypeOnDemand, v1.CapacityTypeSpot
	offer := func(ct string, price float64, available int) *cloudprovider.Offering {
		return &cloudprovider.Offering{Zone: "zone-a", CapacityType: ct, Price: price, Available: available}
	}
	it := func(name string, ofs ...*cloudprovider.Offering) *cloudprovider.InstanceType {
		return test.InstanceType(test.InstanceTypeOptions{Name: name, CPU: 4, Memory: 8, Offerings: ofs})
	}
	u := cloudprovider.Unlimited
	// x is cheap only as spot, y either way, z's on-demand is sold out,
	// w has nothing left.
	x := it("x", offer(od, 0.40, u), offer(spot, 0.05, u))
	y := it("y", offer(od, 0.25, u), offer(spot, 0.10, u))
	z := it("z", offer(od, 0.50, 0), offer(spot, 0.12, u))
	w := it("w", offer(od, 0.10, 0), offer(spot, 0.04, 0))
	anyCT := scheduling.NewRequirements()
	spotReqs := scheduling.NewRequirements(scheduling.NewRequirement(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, spot))

	prices := []struct {
		it    *cloudprovider.InstanceType
		reqs  scheduling.Requirements
		price float64
		ok    bool
	}{
		{x, anyCT, 0.40, true},
		{x, spotReqs, 0.05, true},
		{y, anyCT, 0.25, true},
		{z, anyCT, 0.12, true},
		{w, anyCT, math.Inf(-1), false},
	}
	for _, tc := range prices {
		if p, ok := WorstPrice(tc.it, tc.reqs); p != tc.price || ok != tc.ok {
			t.Errorf("WorstPrice(%s, %v) = %v %v, want %v %v", tc.it.Name, tc.reqs, p, ok, tc.price, tc.ok)
		}
	}

	claim := func(reqs scheduling.Requirements) *provisioning.NodeClaim {
		reqs = reqs.Clone()
		reqs.Add(scheduling.NewRequirement(v1.LabelInstanceType, corev1.NodeSelectorOpIn, "x", "y", "z", "w"))
		return &provisioning.NodeClaim{NodePool: "default", Requirements: reqs, InstanceTypes: []*cloudprovider.InstanceType{w, x, y, z}, CapacityType: spot}
	}
	cases := []struct {
		name  string
		reqs  scheduling.Requirements
		price float64
		want  []string
	}{
		{"spot or on demand: priced at the worst", anyCT, 0.30, []string{"y", "z"}},
		{"spot only", spotReqs, 0.30, []string{"x", "y", "z"}},
		{"spot only, under a lower price", spotReqs, 0.11, []string{"x", "y"}},
		{"nothing cheaper", anyCT, 0.12, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := claim(tc.reqs)
			before := r.Requirements.Get(v1.LabelInstanceType).Values()
			got := Cheaper(r, tc.price)
			if diff := cmp.Diff(before, r.Requirements.Get(v1.LabelInstanceType).Values()); diff != "" {
				t.Errorf("Cheaper changed its argument's requirements (-before +after):\n%s", diff)
			}
			if tc.want == nil {
				if got != nil {
					t.Fatalf("Cheaper = %v, want nil", typeNames(got.InstanceTypes))
				}
				return
			}
			if got == nil {
				t.Fatalf("Cheaper = nil, want %v", tc.want)
			}
			if diff := cmp.Diff(tc.want, typeNames(got.InstanceTypes)); diff != "" {
				t.Errorf("instance types (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got.Requirements.Get(v1.LabelInstanceType).Values()); diff != "" {
				t.Errorf("instance-type requirement (-want +got):\n%s", diff)
			}
		})
	}
}

// Where the solve spreads a node's pods so that they need two new nodes,
// single-node consolidation tries them all on one new node in the
// node's own zone, on new capacity only (SimulateInPlace), and replaces
// the node with that when it is cheaper.
func TestSingleNodeConsolidationTriesOneNodeInPlace(t *testing.T) {
	now := t0.Add(time.Hour)
	c := newCluster()
	underutilized(c)
	poolCapacityTypes(c, v1.CapacityTypeOnDemand)
	c.launched("a", m5n(8), v1.CapacityTypeOnDemand, "")
	c.launched("b", m5n(8), v1.CapacityTypeOnDemand, "")
	c.pod("web-1", "a", requests("1"))
	c.pod("web-2", "a", requests("1"))
	c.pod("web-b", "b", requests("7"))
	c.snapshot(m5...)
	m := SingleNodeConsolidation{}
	env := newEnv(c.in, Candidates(c.in, now), AllowedByPool(c.in, m.Reason(), now), now, m)
	// The solve as if it had spread the pods onto two new nodes.
	env.SimulateKeepingPreferences = func(cs []Candidate) Simulation {
		s := Simulate(c.in.Snapshot, cs)
		if len(s.Replacements) != 1 {
			t.Fatalf("the solve needs %d new nodes, the case wants it to need one to split", len(s.Replacements))
		}
		return Simulation{Replacements: []*provisioning.NodeClaim{s.Replacements[0], s.Replacements[0]}}
	}
	out := m.Compute(env)
	if len(out.Command.Candidates) != 1 || out.Command.Candidates[0].Node.Name != "a" || len(out.Command.Replacements) != 1 {
		t.Fatalf("command %v with %d replacements, verdicts %+v; want a replaced by one node", out.Command.Names(), len(out.Command.Replacements), out.Verdicts)
	}
	r := describeReplacement(out.Command.Replacements[0])
	if diff := cmp.Diff([]string{"default/web-1", "default/web-2"}, r.pods); diff != "" {
		t.Errorf("replacement pods (-want +got):\n%s", diff)
	}
	if zone := out.Command.Replacements[0].Requirements.Get(v1.LabelZone); zone.Len() != 1 || !zone.Has("zone-a") {
		t.Errorf("replacement zones %v, want the node's own zone-a", zone)
	}

	env.SimulateInPlace = nil
	out = m.Compute(env)
	if len(out.Command.Candidates) != 0 {
		t.Fatalf("without the in-place try: command %v, want none", out.Command.Names())
	}
	sameVerdicts(t, []Verdict{single("b", "can't replace with one node: the pods need 2"), single("a", "can't replace with one node: the pods need 2")}, out.Verdicts)
}
