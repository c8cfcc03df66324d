package disruption

import (
	"math"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/test"
)

// Prices here are consolidation_test.go's: m5.n costs 0.07n on demand
// and 0.028n as spot, in zone-a and zone-b.

// rfc3339 is t as the return annotations and verdicts write it.
func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func returnBlocked(node, msg string) Verdict {
	return Verdict{NodeClaim: "nc-" + node, Node: node, Method: "ReturnToPreferred", Event: EventDisruptionBlocked, Message: msg}
}

// fallback launches node as an on-demand instance of it in zone-a that
// the solver planned as a fallback from spot (the capstan.dev/fallback
// annotation).
func (c *cluster) fallback(node string, it *cloudprovider.InstanceType) {
	c.launched(node, it, v1.CapacityTypeOnDemand, "")
	c.claim(node).Annotations = map[string]string{provisioning.FallbackAnnotationKey: "spot/" + it.Name + "/zone-a InsufficientInstanceCapacity"}
}

// annotate sets annotations on node's NodeClaim.
func (c *cluster) annotate(node string, kv ...string) {
	nc := c.claim(node)
	if nc.Annotations == nil {
		nc.Annotations = map[string]string{}
	}
	for i := 0; i+1 < len(kv); i += 2 {
		nc.Annotations[kv[i]] = kv[i+1]
	}
}

// poolAnnotate sets annotations on NodePool "default".
func poolAnnotate(c *cluster, kv ...string) {
	np := c.pool()
	if np.Annotations == nil {
		np.Annotations = map[string]string{}
	}
	for i := 0; i+1 < len(kv); i += 2 {
		np.Annotations[kv[i]] = kv[i+1]
	}
}

// spotSoldOut is its with every spot offering of the named types (of
// every type when none is named) no longer available, as
// UnavailableOfferings.Apply leaves a marked offering.
func spotSoldOut(its []*cloudprovider.InstanceType, only ...string) []*cloudprovider.InstanceType {
	out := make([]*cloudprovider.InstanceType, len(its))
	for i, it := range its {
		out[i] = it
		if len(only) > 0 && !slices.Contains(only, it.Name) {
			continue
		}
		cp := *it
		cp.Offerings = nil
		for _, o := range it.Offerings {
			o := *o
			if o.CapacityType == v1.CapacityTypeSpot {
				o.Available = 0
			}
			cp.Offerings = append(cp.Offerings, &o)
		}
		out[i] = &cp
	}
	return out
}

// spotMarks is a history marking the spot offerings of the named m5
// types in zone until until.
func spotMarks(until time.Time, zone string, types ...string) map[cloudprovider.OfferingKey]time.Time {
	out := map[cloudprovider.OfferingKey]time.Time{}
	for _, it := range types {
		out[cloudprovider.OfferingKey{CapacityType: v1.CapacityTypeSpot, InstanceType: it, Zone: zone}] = until
	}
	return out
}

func TestReturnPolicyOf(t *testing.T) {
	cases := []struct {
		name        string
		annotations map[string]string
		want        ReturnPolicy
		err         string
	}{
		{"defaults", nil, ReturnPolicy{Enabled: true, After: 10 * time.Minute}, ""},
		{"other annotations only", map[string]string{v1.RebalanceAnnotationKey: v1.RebalanceReplace}, ReturnPolicy{Enabled: true, After: DefaultReturnAfter}, ""},
		{"Enabled explicitly: terms return too", map[string]string{v1.ReturnToPreferredAnnotationKey: "Enabled"}, ReturnPolicy{Enabled: true, Terms: true, After: DefaultReturnAfter}, ""},
		{"Disabled", map[string]string{v1.ReturnToPreferredAnnotationKey: "Disabled"}, ReturnPolicy{Enabled: false, After: DefaultReturnAfter}, ""},
		{"custom after", map[string]string{v1.ReturnToPreferredAfterAnnotationKey: "30m"}, ReturnPolicy{Enabled: true, After: 30 * time.Minute}, ""},
		{"Disabled with an after", map[string]string{v1.ReturnToPreferredAnnotationKey: "Disabled", v1.ReturnToPreferredAfterAnnotationKey: "1h30m"},
			ReturnPolicy{Enabled: false, After: 90 * time.Minute}, ""},
		{"the policy is case-sensitive", map[string]string{v1.ReturnToPreferredAnnotationKey: "enabled"}, ReturnPolicy{},
			`annotation capstan.dev/return-to-preferred: "enabled" is not "Enabled" or "Disabled"`},
		{"an empty policy", map[string]string{v1.ReturnToPreferredAnnotationKey: ""}, ReturnPolicy{},
			`annotation capstan.dev/return-to-preferred: "" is not "Enabled" or "Disabled"`},
		{"an unknown policy", map[string]string{v1.ReturnToPreferredAnnotationKey: "true"}, ReturnPolicy{},
			`annotation capstan.dev/return-to-preferred: "true" is not "Enabled" or "Disabled"`},
		{"an after that is no duration", map[string]string{v1.ReturnToPreferredAfterAnnotationKey: "soon"}, ReturnPolicy{},
			`annotation capstan.dev/return-to-preferred-after: "soon" is not a positive duration`},
		{"an after without a unit", map[string]string{v1.ReturnToPreferredAfterAnnotationKey: "600"}, ReturnPolicy{},
			`annotation capstan.dev/return-to-preferred-after: "600" is not a positive duration`},
		{"an empty after", map[string]string{v1.ReturnToPreferredAfterAnnotationKey: ""}, ReturnPolicy{},
			`annotation capstan.dev/return-to-preferred-after: "" is not a positive duration`},
		{"a zero after", map[string]string{v1.ReturnToPreferredAfterAnnotationKey: "0s"}, ReturnPolicy{},
			`annotation capstan.dev/return-to-preferred-after: "0s" is not a positive duration`},
		{"a negative after", map[string]string{v1.ReturnToPreferredAfterAnnotationKey: "-5m"}, ReturnPolicy{},
			`annotation capstan.dev/return-to-preferred-after: "-5m" is not a positive duration`},
		{"a bad policy is reported before a bad after", map[string]string{v1.ReturnToPreferredAnnotationKey: "Never", v1.ReturnToPreferredAfterAnnotationKey: "soon"}, ReturnPolicy{},
			`annotation capstan.dev/return-to-preferred: "Never" is not "Enabled" or "Disabled"`},
		{"a bad after with Disabled is still an error", map[string]string{v1.ReturnToPreferredAnnotationKey: "Disabled", v1.ReturnToPreferredAfterAnnotationKey: "0"}, ReturnPolicy{},
			`annotation capstan.dev/return-to-preferred-after: "0" is not a positive duration`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			np := test.NodePool(func(np *v1.NodePool) { np.Annotations = tc.annotations })
			got, err := ReturnPolicyOf(np)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if gotErr != tc.err {
				t.Errorf("error %q, want %q", gotErr, tc.err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("policy (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFallbackFrom(t *testing.T) {
	od, spot, reserved := v1.CapacityTypeOnDemand, v1.CapacityTypeSpot, v1.CapacityTypeReserved
	annotated := map[string]string{provisioning.FallbackAnnotationKey: "spot/m5.4/zone-a InsufficientInstanceCapacity"}
	capacityTypes := func(op corev1.NodeSelectorOperator, cts ...string) []v1.NodeSelectorRequirementWithMinValues {
		return []v1.NodeSelectorRequirementWithMinValues{{Key: v1.CapacityTypeLabelKey, Operator: op, Values: cts}}
	}
	// The node is an m5.4 in zone-a; reservedHere has a reservation for
	// it there, full; reservedElsewhere one in zone-b and one for m5.2.
	reservedHere := reserve(m5, 4, "cr-1", 0)
	reservedElsewhere := reserve(m5, 2, "cr-2", 1)
	reservedElsewhere[3] = test.InstanceType(test.InstanceTypeOptions{Name: "m5.4", CPU: 4, Memory: 8, Family: "m5", Offerings: append(slices.Clone(m5n(4).Offerings),
		&cloudprovider.Offering{Zone: "zone-b", CapacityType: reserved, ReservationID: "cr-3", Price: 1e-8, Available: 1})})
	cases := []struct {
		name string
		// ct is the NodeClaim's capacity-type label ("" for none).
		ct          string
		annotations map[string]string
		ncReqs      []v1.NodeSelectorRequirementWithMinValues
		poolReqs    []v1.NodeSelectorRequirementWithMinValues
		// its are the NodePool's instance types, m5 when nil.
		its  []*cloudprovider.InstanceType
		want []string
	}{
		{"on-demand, annotated, the NodePool allows spot", od, annotated, nil, capacityTypes(corev1.NodeSelectorOpIn, spot, od), nil, []string{spot}},
		{"on-demand, annotated, the NodePool says nothing of capacity types", od, annotated, nil, nil, nil, []string{spot}},
		{"on-demand whose requirements name spot and on-demand", od, nil, capacityTypes(corev1.NodeSelectorOpIn, spot, od), capacityTypes(corev1.NodeSelectorOpIn, spot, od), nil, []string{spot}},
		{"on-demand whose requirements name spot only", od, nil, capacityTypes(corev1.NodeSelectorOpIn, spot), nil, nil, []string{spot}},
		{"on-demand whose requirements name on-demand only", od, nil, capacityTypes(corev1.NodeSelectorOpIn, od), capacityTypes(corev1.NodeSelectorOpIn, spot, od), nil, nil},
		{"on-demand whose requirements exclude spot", od, nil, capacityTypes(corev1.NodeSelectorOpNotIn, spot), nil, nil, nil},
		{"on-demand with neither a capacity-type requirement nor the annotation", od, nil, nil, capacityTypes(corev1.NodeSelectorOpIn, spot, od), nil, nil},
		{"on-demand with an empty annotation", od, map[string]string{provisioning.FallbackAnnotationKey: ""}, nil, nil, nil, nil},
		{"a spot node", spot, annotated, capacityTypes(corev1.NodeSelectorOpIn, spot, od), nil, nil, nil},
		{"a reserved node", reserved, annotated, capacityTypes(corev1.NodeSelectorOpIn, reserved, spot, od), nil, reservedHere, nil},
		{"no capacity-type label", "", annotated, nil, nil, nil, nil},
		{"the NodePool allows on-demand only now", od, annotated, capacityTypes(corev1.NodeSelectorOpIn, spot, od), capacityTypes(corev1.NodeSelectorOpIn, od), nil, nil},
		{"the NodePool excludes spot now", od, annotated, nil, capacityTypes(corev1.NodeSelectorOpNotIn, spot), nil, nil},

		// From a reservation: a full one for its type in its zone.
		{"requirements allowed a reservation its type has in its zone", od, nil, capacityTypes(corev1.NodeSelectorOpIn, reserved, od),
			capacityTypes(corev1.NodeSelectorOpIn, reserved, od), reservedHere, []string{reserved}},
		{"a NodePool that names no capacity type allows reserved", od, nil, capacityTypes(corev1.NodeSelectorOpIn, reserved, od), nil, reservedHere, []string{reserved}},
		{"from a reservation and from spot, in launch order", od, annotated, capacityTypes(corev1.NodeSelectorOpIn, reserved, spot, od),
			capacityTypes(corev1.NodeSelectorOpIn, reserved, spot, od), reservedHere, []string{reserved, spot}},
		{"planned as a fallback from a full reservation: requirements narrowed to on-demand", od,
			map[string]string{provisioning.FallbackAnnotationKey: "preferred capacity unavailable: reserved/m5.4/zone-a/cr-1 full"}, capacityTypes(corev1.NodeSelectorOpIn, od),
			capacityTypes(corev1.NodeSelectorOpIn, reserved, spot, od), reservedHere, []string{reserved}},
		{"requirements that did not allow a reservation", od, nil, capacityTypes(corev1.NodeSelectorOpIn, od), nil, reservedHere, nil},
		{"no reservation for its type in its zone: an on-demand node, not a fallback", od, nil, capacityTypes(corev1.NodeSelectorOpIn, reserved, od),
			capacityTypes(corev1.NodeSelectorOpIn, reserved, od), reservedElsewhere, nil},
		{"no reservation at all", od, nil, capacityTypes(corev1.NodeSelectorOpIn, reserved, od), capacityTypes(corev1.NodeSelectorOpIn, reserved, od), nil, nil},
		{"the NodePool allows no reservation now", od, nil, capacityTypes(corev1.NodeSelectorOpIn, reserved, od), capacityTypes(corev1.NodeSelectorOpIn, od), reservedHere, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			nc := test.NodeClaim(func(nc *v1.NodeClaim) {
				nc.Labels = map[string]string{v1.NodePoolLabelKey: "default", v1.LabelInstanceType: "m5.4", v1.LabelZone: "zone-a"}
				if tc.ct != "" {
					nc.Labels[v1.CapacityTypeLabelKey] = tc.ct
				}
				nc.Annotations = tc.annotations
				if tc.ncReqs != nil {
					nc.Spec.Requirements = tc.ncReqs
				}
			})
			np := test.NodePool(func(np *v1.NodePool) {
				np.Name = "default"
				if tc.poolReqs != nil {
					np.Spec.Template.Spec.Requirements = tc.poolReqs
				}
			})
			its := tc.its
			if its == nil {
				its = m5
			}
			if diff := cmp.Diff(tc.want, FallbackFrom(nc, np, its)); diff != "" {
				t.Errorf("FallbackFrom (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReturnToPreferred(t *testing.T) {
	od, spot := v1.CapacityTypeOnDemand, v1.CapacityTypeSpot
	now := t0.Add(time.Hour)
	// pricey: spot dearer than on demand, so no return pays.
	pricey := []*cloudprovider.InstanceType{
		test.InstanceType(test.InstanceTypeOptions{Name: "x.4", CPU: 4, Memory: 8, Offerings: cloudprovider.Offerings{
			{Zone: "zone-a", CapacityType: od, Price: 0.20, Available: cloudprovider.Unlimited},
			{Zone: "zone-a", CapacityType: spot, Price: 0.25, Available: cloudprovider.Unlimited},
		}}),
	}
	returned := func(types ...string) []wantReplacement {
		return []wantReplacement{{pods: []string{"default/web"}, types: types, allows: spotOnly, capacityType: spot}}
	}
	cases := []struct {
		name string
		// setup: NodePool "default" allows spot and on-demand; node a is
		// an on-demand m5.4 fallback (launched at t0) running the 1-core
		// pod web, and is the only node. The snapshot is built after.
		setup func(c *cluster)
		// its are the NodePool's instance types, m5 when nil.
		its     []*cloudprovider.InstanceType
		history cloudprovider.UnavailableHistory
		// want is the node returned; replacements its replacement.
		want         []string
		replacements []wantReplacement
		verdicts     []Verdict
		eligible     int
		wakeAt       time.Time
	}{
		{name: "a fallback node returns to spot: spot only, every type that fits and is cheaper",
			setup: func(*cluster) {}, want: []string{"a"}, replacements: returned(m5s(2, 8)...), eligible: 1},
		{name: "fell back by its requirements, without the annotation", setup: func(c *cluster) {
			c.claim("a").Annotations = nil
			c.claim("a").Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: onDemandAndSpot}}
		}, want: []string{"a"}, replacements: returned(m5s(2, 8)...), eligible: 1},
		{name: "a NodePool that names no capacity type allows spot", setup: func(c *cluster) {
			c.pool().Spec.Template.Spec.Requirements = nil
		}, want: []string{"a"}, replacements: returned(m5s(2, 8)...), eligible: 1},
		{name: "the replacement is priced as spot: the node's own size returns too", setup: func(c *cluster) {
			c.in.Pods = nil
			c.pod("web", "a", requests("3"))
		}, want: []string{"a"}, replacements: returned(m5s(4, 8)...), eligible: 1},

		// Not fallback nodes.
		{name: "an on-demand node that did not fall back", setup: func(c *cluster) {
			c.claim("a").Annotations = nil
		}, eligible: 0},
		{name: "a spot node", setup: func(c *cluster) {
			c.launched("a", m5n(4), spot, "")
		}, eligible: 0},
		{name: "the NodePool allows on-demand only now", setup: func(c *cluster) {
			c.pool().Spec.Template.Spec.Requirements = nil
			poolCapacityTypes(c, od)
		}, eligible: 0},

		// The policy.
		{name: "return-to-preferred Disabled: not considered, no verdict", setup: func(c *cluster) {
			poolAnnotate(c, v1.ReturnToPreferredAnnotationKey, v1.ReturnToPreferredDisabled)
		}, eligible: 0},
		{name: "an invalid policy: not considered (the NodePool's condition says why)", setup: func(c *cluster) {
			poolAnnotate(c, v1.ReturnToPreferredAfterAnnotationKey, "soon")
		}, eligible: 0},
		// A static NodePool keeps its replicas (docs/static.md).
		{name: "a static NodePool's fallback node stays", setup: func(c *cluster) {
			c.pool().Spec.Replicas = ptr.To[int64](1)
		}, eligible: 0},
		{name: "Enabled explicitly", setup: func(c *cluster) {
			poolAnnotate(c, v1.ReturnToPreferredAnnotationKey, v1.ReturnToPreferredEnabled)
		}, want: []string{"a"}, replacements: returned(m5s(2, 8)...), eligible: 1},

		// Spot availability.
		{name: "spot marked unavailable until 5m ago: waits out the 10m default",
			setup:    func(*cluster) {},
			history:  cloudprovider.UnavailableHistory{CapacityTypes: map[string]time.Time{spot: now.Add(-5 * time.Minute)}},
			verdicts: []Verdict{returnBlocked("a", "spot is available again, but not for 10m0s yet: returning at "+rfc3339(now.Add(5*time.Minute)))},
			eligible: 1, wakeAt: now.Add(5 * time.Minute)},
		{name: "unavailable until exactly 10m ago: returns",
			setup:   func(*cluster) {},
			history: cloudprovider.UnavailableHistory{CapacityTypes: map[string]time.Time{spot: now.Add(-10 * time.Minute)}},
			want:    []string{"a"}, replacements: returned(m5s(2, 8)...), eligible: 1},
		{name: "the NodePool's after: 15m ago is not 30m", setup: func(c *cluster) {
			poolAnnotate(c, v1.ReturnToPreferredAfterAnnotationKey, "30m")
		}, history: cloudprovider.UnavailableHistory{CapacityTypes: map[string]time.Time{spot: now.Add(-15 * time.Minute)}},
			verdicts: []Verdict{returnBlocked("a", "spot is available again, but not for 30m0s yet: returning at "+rfc3339(now.Add(15*time.Minute)))},
			eligible: 1, wakeAt: now.Add(15 * time.Minute)},
		{name: "the NodePool's after: 15m ago is more than 5m", setup: func(c *cluster) {
			poolAnnotate(c, v1.ReturnToPreferredAfterAnnotationKey, "5m")
		}, history: cloudprovider.UnavailableHistory{CapacityTypes: map[string]time.Time{spot: now.Add(-15 * time.Minute)}},
			want: []string{"a"}, replacements: returned(m5s(2, 8)...), eligible: 1},
		{name: "on-demand marked lately does not matter",
			setup:   func(*cluster) {},
			history: cloudprovider.UnavailableHistory{CapacityTypes: map[string]time.Time{od: now.Add(-time.Minute)}},
			want:    []string{"a"}, replacements: returned(m5s(2, 8)...), eligible: 1},
		{name: "types with an offering marked lately are left out",
			setup:   func(*cluster) {},
			history: cloudprovider.UnavailableHistory{Offerings: mergeMarks(spotMarks(now.Add(-time.Minute), "zone-a", "m5.2"), spotMarks(now.Add(-9*time.Minute), "zone-b", "m5.3"))},
			want:    []string{"a"}, replacements: returned(m5s(4, 8)...), eligible: 1},
		{name: "every type that fits marked lately, only one too small settled: waits for the first",
			setup: func(*cluster) {},
			history: cloudprovider.UnavailableHistory{Offerings: mergeMarks(
				spotMarks(now.Add(-2*time.Minute), "zone-a", m5s(2, 8)...),
				spotMarks(now.Add(-4*time.Minute), "zone-b", "m5.5"))},
			verdicts: []Verdict{returnBlocked("a", "spot is available again, but not for 10m0s yet: returning at "+rfc3339(now.Add(6*time.Minute)))},
			eligible: 1, wakeAt: now.Add(6 * time.Minute)},
		// Before simulating, any of the NodePool's spot offerings, the
		// types too small for the pods included, tells when to look again:
		// the earliest to settle (m5.1 in 1m), though the pods' types
		// settle only in 8m.
		{name: "nothing settled: wakes when the NodePool's first spot offering settles",
			setup: func(*cluster) {},
			history: cloudprovider.UnavailableHistory{Offerings: mergeMarks(
				spotMarks(now.Add(-9*time.Minute), "zone-a", "m5.1"),
				spotMarks(now.Add(-2*time.Minute), "zone-a", m5s(2, 8)...),
				spotMarks(now.Add(-2*time.Minute), "zone-b", m5s(1, 8)...))},
			verdicts: []Verdict{returnBlocked("a", "spot is available again, but not for 10m0s yet: returning at "+rfc3339(now.Add(time.Minute)))},
			eligible: 1, wakeAt: now.Add(time.Minute)},
		{name: "no spot offering available at all", its: spotSoldOut(m5), setup: func(*cluster) {},
			verdicts: []Verdict{returnBlocked("a", "spot is still unavailable")}, eligible: 1},
		{name: "spot available only for a type too small", its: spotSoldOut(m5, m5s(2, 8)...), setup: func(*cluster) {},
			verdicts: []Verdict{returnBlocked("a", "spot is still unavailable for its pods")}, eligible: 1},
		{name: "spot sold out for some types: the others", its: spotSoldOut(m5, "m5.2", "m5.3"), setup: func(*cluster) {},
			want: []string{"a"}, replacements: returned(m5s(4, 8)...), eligible: 1},
		{name: "spot is not cheaper", its: pricey, setup: func(c *cluster) {
			c.fallback("a", pricey[0])
		}, verdicts: []Verdict{returnBlocked("a", "spot is not cheaper than the node")}, eligible: 1},

		// Backoff after failed returns.
		{name: "a failed return waits until its not-before", setup: func(c *cluster) {
			c.annotate("a", v1.ReturnAttemptsAnnotationKey, "2", v1.ReturnNotBeforeAnnotationKey, rfc3339(now.Add(30*time.Minute)))
		}, verdicts: []Verdict{returnBlocked("a", "returning to spot waits until "+rfc3339(now.Add(30*time.Minute))+", after 2 failed attempt(s)")},
			eligible: 1, wakeAt: now.Add(30 * time.Minute)},
		{name: "its not-before passed: returns", setup: func(c *cluster) {
			c.annotate("a", v1.ReturnAttemptsAnnotationKey, "2", v1.ReturnNotBeforeAnnotationKey, rfc3339(now))
		}, want: []string{"a"}, replacements: returned(m5s(2, 8)...), eligible: 1},
		{name: "an unreadable not-before does not hold it", setup: func(c *cluster) {
			c.annotate("a", v1.ReturnAttemptsAnnotationKey, "2", v1.ReturnNotBeforeAnnotationKey, "tomorrow")
		}, want: []string{"a"}, replacements: returned(m5s(2, 8)...), eligible: 1},

		// Blockers, as for every method.
		{name: "a do-not-disrupt pod blocks it", setup: func(c *cluster) {
			c.in.Pods = nil
			c.pod("web", "a", requests("1"), doNotDisrupt)
		}, verdicts: []Verdict{returnBlocked("a", "pod default/web has do-not-disrupt")}, eligible: 1},
		{name: "do-not-disrupt on the node blocks it", setup: func(c *cluster) {
			c.nodeNamed("a").Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: "true"}
		}, verdicts: []Verdict{returnBlocked("a", "node a has do-not-disrupt")}, eligible: 1},
		{name: "a PDB that allows no eviction blocks it", setup: func(c *cluster) {
			c.pdb("web-pdb", 0)
		}, verdicts: []Verdict{returnBlocked("a", "pdb default/web-pdb prevents pod evictions")}, eligible: 1},
		{name: "a budget of 0 for Underutilized", setup: func(c *cluster) {
			c.pool().Spec.Disruption.Budgets = []v1.Budget{{Nodes: "0", Reasons: []v1.DisruptionReason{v1.DisruptionReasonUnderutilized}}, {Nodes: "100%"}}
		}, verdicts: []Verdict{returnBlocked("a", "disruption budget of 0 for Underutilized")}, eligible: 1},
		{name: "a Drifted budget of 0 does not hold it", setup: func(c *cluster) {
			c.pool().Spec.Disruption.Budgets = []v1.Budget{{Nodes: "0", Reasons: []v1.DisruptionReason{v1.DisruptionReasonDrifted}}, {Nodes: "100%"}}
		}, want: []string{"a"}, replacements: returned(m5s(2, 8)...), eligible: 1},
		{name: "a deleting node: no verdict", setup: func(c *cluster) {
			c.claim("a").DeletionTimestamp = &metav1.Time{Time: t0}
		}, eligible: 0},
		{name: "the blockers come before the backoff", setup: func(c *cluster) {
			c.nodeNamed("a").Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: "true"}
			c.annotate("a", v1.ReturnAttemptsAnnotationKey, "1", v1.ReturnNotBeforeAnnotationKey, rfc3339(now.Add(time.Hour)))
		}, verdicts: []Verdict{returnBlocked("a", "node a has do-not-disrupt")}, eligible: 1},

		// Where its pods would go.
		{name: "a node whose price is not known", setup: func(c *cluster) {
			c.claim("a").Labels[v1.LabelInstanceType] = "gone.4"
		}, verdicts: []Verdict{returnBlocked("a", "the node's price is not known")}, eligible: 1},
		{name: "pods that fit nowhere", setup: func(c *cluster) {
			c.pod("huge", "a", requests("32"))
		}, verdicts: []Verdict{returnBlocked("a", "not all pods would schedule, pod default/huge: *")}, eligible: 1},
		{name: "pods that need two nodes", setup: func(c *cluster) {
			c.fallback("a", m5n(8))
			c.in.Pods = nil
			c.pod("web-1", "a", requests("5"))
			c.pod("web-2", "a", requests("5"))
		}, verdicts: []Verdict{returnBlocked("a", "its pods need 2 new nodes, not one")}, eligible: 1},
		{name: "pods that fit the other nodes need no replacement", setup: func(c *cluster) {
			c.launched("b", m5n(8), spot, "")
		}, verdicts: []Verdict{returnBlocked("a", "its pods need 0 new nodes, not one")}, eligible: 1},
		{name: "the first fallback node that can return, by name", setup: func(c *cluster) {
			c.nodeNamed("a").Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: "true"}
			c.fallback("b", m5n(4))
			c.fallback("c", m5n(4))
			c.pod("web-b", "b", requests("3"))
			c.pod("web-c", "c", requests("3"))
		}, want: []string{"b"}, replacements: []wantReplacement{
			{pods: []string{"default/web-b"}, types: m5s(4, 8), allows: spotOnly, capacityType: spot},
		}, verdicts: []Verdict{returnBlocked("a", "node a has do-not-disrupt")}, eligible: 2},
		// A failed return backs its whole NodePool off: b would fail on
		// the same short pool.
		{name: "a NodePool backs off as one", setup: func(c *cluster) {
			c.fallback("b", m5n(4))
			c.pod("web-b", "b", requests("3"))
			c.annotate("a", v1.ReturnNotBeforeAnnotationKey, rfc3339(now.Add(time.Hour)))
			c.annotate("a", v1.ReturnAttemptsAnnotationKey, "2")
		}, history: cloudprovider.UnavailableHistory{CapacityTypes: map[string]time.Time{spot: now.Add(-8 * time.Minute)}},
			verdicts: []Verdict{
				returnBlocked("a", "returning to spot waits until "+rfc3339(now.Add(time.Hour))+", after 2 failed attempt(s)"),
				returnBlocked("b", "returning to spot waits until "+rfc3339(now.Add(time.Hour))+", after 2 failed attempt(s) in its NodePool"),
			}, eligible: 2, wakeAt: now.Add(time.Hour)},
		// From a reservation: node a allowed reserved and on-demand, and
		// its m5.4 has a reservation in zone-a (fromReservation).
		{name: "a node that fell back from a full reservation returns to it once a slot frees", its: reserve(m5, 4, "cr-1", 1), setup: fromReservation,
			want: []string{"a"}, replacements: []wantReplacement{
				{pods: []string{"default/web"}, types: []string{"m5.4"}, allows: reservedOnly, capacityType: v1.CapacityTypeReserved, reservation: "cr-1"},
			}, eligible: 1},
		{name: "the reservation is still full", its: reserve(m5, 4, "cr-1", 0), setup: fromReservation,
			verdicts: []Verdict{returnBlocked("a", "reserved capacity is still unavailable")}, eligible: 1},
		{name: "a slot freed lately: waits out the 10m default", its: reserve(m5, 4, "cr-1", 1), setup: fromReservation,
			history: cloudprovider.UnavailableHistory{Offerings: map[cloudprovider.OfferingKey]time.Time{
				{CapacityType: v1.CapacityTypeReserved, InstanceType: "m5.4", Zone: "zone-a", ReservationID: "cr-1"}: now.Add(-4 * time.Minute),
			}},
			verdicts: []Verdict{returnBlocked("a", "reserved capacity is available again, but not for 10m0s yet: returning at "+rfc3339(now.Add(6*time.Minute)))},
			eligible: 1, wakeAt: now.Add(6 * time.Minute)},
		{name: "a failed return to a reservation backs off", its: reserve(m5, 4, "cr-1", 1), setup: func(c *cluster) {
			fromReservation(c)
			c.annotate("a", v1.ReturnAttemptsAnnotationKey, "1", v1.ReturnNotBeforeAnnotationKey, rfc3339(now.Add(20*time.Minute)))
		}, verdicts: []Verdict{returnBlocked("a", "returning to reserved capacity waits until "+rfc3339(now.Add(20*time.Minute))+", after 1 failed attempt(s)")},
			eligible: 1, wakeAt: now.Add(20 * time.Minute)},
		{name: "a free reservation for another type only: not a fallback", its: reserve(m5, 2, "cr-2", 1), setup: fromReservation, eligible: 0},
		// The solver fills a free reservation first, so the replacement is
		// the reservation's alone.
		{name: "from a reservation and spot: the free reservation", its: reserve(m5, 4, "cr-1", 1), setup: func(c *cluster) {
			c.pool().Spec.Template.Spec.Requirements = nil
			poolCapacityTypes(c, v1.CapacityTypeReserved, spot, od)
			c.claim("a").Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{v1.CapacityTypeReserved, spot, od}}}
		}, want: []string{"a"}, replacements: []wantReplacement{
			{pods: []string{"default/web"}, types: []string{"m5.4"}, allows: reservedOnly, capacityType: v1.CapacityTypeReserved, reservation: "cr-1"},
		}, eligible: 1},
		{name: "from a reservation and spot: spot when the reservation is full", its: reserve(m5, 4, "cr-1", 0), setup: func(c *cluster) {
			c.pool().Spec.Template.Spec.Requirements = nil
			poolCapacityTypes(c, v1.CapacityTypeReserved, spot, od)
			c.claim("a").Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{v1.CapacityTypeReserved, spot, od}}}
		}, want: []string{"a"}, replacements: []wantReplacement{
			{pods: []string{"default/web"}, types: m5s(2, 8), allows: spotOnly, capacityType: spot},
		}, eligible: 1},
		{name: "from a reservation and spot, both gone", its: spotSoldOut(reserve(m5, 4, "cr-1", 0)), setup: func(c *cluster) {
			c.pool().Spec.Template.Spec.Requirements = nil
			poolCapacityTypes(c, v1.CapacityTypeReserved, spot, od)
			c.claim("a").Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{v1.CapacityTypeReserved, spot, od}}}
		}, verdicts: []Verdict{returnBlocked("a", "reserved capacity or spot is still unavailable")}, eligible: 1},
		{name: "the earliest wake of several waiting nodes", setup: func(c *cluster) {
			c.fallback("b", m5n(4))
			c.pod("web-b", "b", requests("3"))
		}, history: cloudprovider.UnavailableHistory{Offerings: map[cloudprovider.OfferingKey]time.Time{
			{CapacityType: spot, InstanceType: "m5.2", Zone: "zone-a"}: now.Add(-8 * time.Minute),
		}, CapacityTypes: map[string]time.Time{spot: now.Add(-9 * time.Minute)}},
			verdicts: []Verdict{
				returnBlocked("a", "spot is available again, but not for 10m0s yet: returning at "+rfc3339(now.Add(time.Minute))),
				returnBlocked("b", "spot is available again, but not for 10m0s yet: returning at "+rfc3339(now.Add(time.Minute))),
			}, eligible: 2, wakeAt: now.Add(time.Minute)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster()
			poolCapacityTypes(c, onDemandAndSpot...)
			c.fallback("a", m5n(4))
			c.pod("web", "a", requests("1"))
			tc.setup(c)
			its := tc.its
			if its == nil {
				its = m5
			}
			c.in.Unavailable = tc.history
			c.snapshot(its...)
			d := Plan(c.in, []Method{ReturnToPreferred{}}, now)
			checkPlanned(t, d, ReturnToPreferred{}, tc.want, tc.replacements, tc.verdicts, tc.eligible)
			if !d.WakeAt.Equal(tc.wakeAt) {
				t.Errorf("wake at %s, want %s", d.WakeAt, tc.wakeAt)
			}
		})
	}
}

// fromReservation makes node a an on-demand node whose requirements
// allowed reserved capacity, in a NodePool of reserved and on-demand
// capacity.
func fromReservation(c *cluster) {
	c.pool().Spec.Template.Spec.Requirements = nil
	poolCapacityTypes(c, v1.CapacityTypeReserved, v1.CapacityTypeOnDemand)
	c.claim("a").Annotations = nil
	c.claim("a").Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{v1.CapacityTypeReserved, v1.CapacityTypeOnDemand}}}
}

func mergeMarks(ms ...map[cloudprovider.OfferingKey]time.Time) map[cloudprovider.OfferingKey]time.Time {
	out := map[cloudprovider.OfferingKey]time.Time{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

func TestReturnBackoff(t *testing.T) {
	now := t0.Add(time.Hour)
	backoff := func(attempts int, wait time.Duration) map[string]string {
		return map[string]string{
			v1.ReturnAttemptsAnnotationKey:  strconv.Itoa(attempts),
			v1.ReturnNotBeforeAnnotationKey: rfc3339(now.Add(wait)),
		}
	}
	cases := []struct {
		name string
		// annotations are the NodeClaim's; after the NodePool's
		// return-to-preferred-after ("" for none).
		annotations map[string]string
		after       string
		want        map[string]string
	}{
		{"the first failure: after × 2", nil, "", backoff(1, 20*time.Minute)},
		{"the second: after × 4", map[string]string{v1.ReturnAttemptsAnnotationKey: "1", v1.ReturnNotBeforeAnnotationKey: rfc3339(t0)}, "", backoff(2, 40*time.Minute)},
		{"the fourth: after × 16", map[string]string{v1.ReturnAttemptsAnnotationKey: "3"}, "", backoff(4, 160*time.Minute)},
		{"the fifth: capped", map[string]string{v1.ReturnAttemptsAnnotationKey: "4"}, "", backoff(5, MaxReturnBackoff)},
		{"many: capped", map[string]string{v1.ReturnAttemptsAnnotationKey: "40"}, "", backoff(41, MaxReturnBackoff)},
		{"the NodePool's after", nil, "30m", backoff(1, time.Hour)},
		{"the NodePool's after, the second failure", map[string]string{v1.ReturnAttemptsAnnotationKey: "1"}, "30m", backoff(2, 2*time.Hour)},
		{"the NodePool's after, reaching the cap exactly", map[string]string{v1.ReturnAttemptsAnnotationKey: "1"}, "1h", backoff(2, 4*time.Hour)},
		{"an after beyond the cap: capped at once", nil, "6h", backoff(1, MaxReturnBackoff)},
		{"a long after after many failures: still capped", map[string]string{v1.ReturnAttemptsAnnotationKey: "16"}, "24h", backoff(17, MaxReturnBackoff)},
		{"a very long after: still capped", map[string]string{v1.ReturnAttemptsAnnotationKey: "3"}, "2000000h", backoff(4, MaxReturnBackoff)},
		{"an invalid after: the default", map[string]string{v1.ReturnAttemptsAnnotationKey: "1"}, "soon", backoff(2, 40*time.Minute)},
		{"unreadable attempts count as none", map[string]string{v1.ReturnAttemptsAnnotationKey: "many"}, "", backoff(1, 20*time.Minute)},
		{"negative attempts count as none", map[string]string{v1.ReturnAttemptsAnnotationKey: "-3"}, "", backoff(1, 20*time.Minute)},
		{"the largest count: capped, not wrapped", map[string]string{v1.ReturnAttemptsAnnotationKey: strconv.Itoa(math.MaxInt)}, "", backoff(math.MaxInt, MaxReturnBackoff)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			nc := test.NodeClaim(func(nc *v1.NodeClaim) { nc.Annotations = tc.annotations })
			np := test.NodePool(func(np *v1.NodePool) {
				if tc.after != "" {
					np.Annotations = map[string]string{v1.ReturnToPreferredAfterAnnotationKey: tc.after}
				}
			})
			var got map[string]string
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("ReturnBackoff panicked: %v", r)
					}
				}()
				got = ReturnBackoff(nc, np, now)
			}()
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
		})
	}
	// The time is written in UTC, whatever now's location.
	est := time.FixedZone("EST", -5*3600)
	got := ReturnBackoff(test.NodeClaim(), test.NodePool(), now.In(est))
	if want := rfc3339(now.Add(20 * time.Minute)); got[v1.ReturnNotBeforeAnnotationKey] != want || want[len(want)-1] != 'Z' {
		t.Errorf("not-before %q, want %q", got[v1.ReturnNotBeforeAnnotationKey], want)
	}
}

// returning is a cluster whose only node, a, is an on-demand m5.4 that
// fell back from spot and runs a 1-core pod: the engine's methods
// (consolidation off) pick ReturnToPreferred for it.
func returning(t *testing.T) *cluster {
	t.Helper()
	c := newCluster()
	poolCapacityTypes(c, onDemandAndSpot...)
	c.fallback("a", m5n(4))
	c.pod("web", "a", requests("1"))
	c.snapshot(m5...)
	return c
}

// startReturn ticks e over c at now and again after the validation
// delay: the return is validated, a tainted, its replacement launched.
func startReturn(t *testing.T, e *Engine, c *cluster, now time.Time) {
	t.Helper()
	tick, err := e.Tick(c.in, nil, now)
	if err != nil || tick.Started == nil || tick.Started.Method != "ReturnToPreferred" {
		t.Fatalf("tick %+v %v, want a ReturnToPreferred command started", tick, err)
	}
	tick, err = e.Tick(c.in, nil, now.Add(delay))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Taint a", "Launch default-r1"}, summary(tick.Actions)); diff != "" {
		t.Fatalf("validation actions (-want +got):\n%s", diff)
	}
	for _, a := range tick.Actions {
		for _, nc := range a.NodeClaims {
			if got := nc.Spec.Requirements; !spotOnlyRequirement(got) {
				t.Errorf("replacement %s requirements %v, want capacity type spot only", nc.Name, got)
			}
		}
	}
	if diff := cmp.Diff([]string{"default-r1"}, e.Replacements()); diff != "" {
		t.Fatalf("replacements to observe (-want +got):\n%s", diff)
	}
}

func spotOnlyRequirement(reqs []v1.NodeSelectorRequirementWithMinValues) bool {
	for _, r := range reqs {
		if r.Key == v1.CapacityTypeLabelKey {
			return r.Operator == corev1.NodeSelectorOpIn && cmp.Equal(r.Values, []string{v1.CapacityTypeSpot})
		}
	}
	return false
}

// A return whose replacement fails backs the candidate off; one whose
// replacement comes up deletes it; a failed Drift command sets nothing.
func TestEngineReturnBackoff(t *testing.T) {
	now := t0.Add(time.Hour)
	failedAt := now.Add(delay + time.Minute)
	cases := []struct {
		name string
		// annotations on a's NodeClaim before the return.
		annotations map[string]string
		// at is when the replacement is observed as status.
		at        time.Time
		status    map[string]ReplacementStatus
		actions   []string
		abandoned string
		annotate  map[string]map[string]string
	}{
		{"the replacement failed: back off", nil, failedAt, map[string]ReplacementStatus{"default-r1": ReplacementFailed},
			[]string{"Untaint a"}, "replacement nodeclaim default-r1 failed to launch or initialize",
			map[string]map[string]string{"nc-a": {v1.ReturnAttemptsAnnotationKey: "1", v1.ReturnNotBeforeAnnotationKey: rfc3339(failedAt.Add(20 * time.Minute))}}},
		{"the replacement is not observed: failed too", nil, failedAt, nil,
			[]string{"Untaint a"}, "replacement nodeclaim default-r1 failed to launch or initialize",
			map[string]map[string]string{"nc-a": {v1.ReturnAttemptsAnnotationKey: "1", v1.ReturnNotBeforeAnnotationKey: rfc3339(failedAt.Add(20 * time.Minute))}}},
		{"the second failure doubles the wait", map[string]string{v1.ReturnAttemptsAnnotationKey: "1", v1.ReturnNotBeforeAnnotationKey: rfc3339(now.Add(-time.Minute))},
			failedAt, map[string]ReplacementStatus{"default-r1": ReplacementFailed},
			[]string{"Untaint a"}, "replacement nodeclaim default-r1 failed to launch or initialize",
			map[string]map[string]string{"nc-a": {v1.ReturnAttemptsAnnotationKey: "2", v1.ReturnNotBeforeAnnotationKey: rfc3339(failedAt.Add(40 * time.Minute))}}},
		{"the replacement timed out: back off", nil, now.Add(delay + timeout), map[string]ReplacementStatus{"default-r1": ReplacementLaunching},
			[]string{"Untaint a"}, "replacements did not initialize within 20m0s",
			map[string]map[string]string{"nc-a": {v1.ReturnAttemptsAnnotationKey: "1", v1.ReturnNotBeforeAnnotationKey: rfc3339(now.Add(delay + timeout + 20*time.Minute))}}},
		{"the replacement initialized: a goes, nothing to annotate", nil, failedAt, map[string]ReplacementStatus{"default-r1": ReplacementInitialized},
			[]string{"Delete a"}, "", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := returning(t)
			c.claim("a").Annotations = mergeAnnotations(c.claim("a").Annotations, tc.annotations)
			e := &Engine{Options: options(), EventInterval: DefaultEventInterval}
			startReturn(t, e, c, now)
			tick, err := e.Tick(c.in, tc.status, tc.at)
			if err != nil {
				t.Fatal(err)
			}
			if tick.Finished == nil || tick.Finished.Method != "ReturnToPreferred" {
				t.Fatalf("tick %+v, want the return finished", tick)
			}
			checkAbandoned(t, tick.Abandoned, tc.abandoned)
			if diff := cmp.Diff(tc.actions, summary(tick.Actions)); diff != "" {
				t.Errorf("actions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.annotate, tick.Annotate, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("annotate (-want +got):\n%s", diff)
			}
			if _, active := e.Active(); active {
				t.Error("the finished return is still active")
			}
		})
	}
}

// After a failed return the node waits out its backoff: the engine
// plans no return, says until when, and wakes then; after it, the node
// returns.
func TestEngineWaitsOutReturnBackoff(t *testing.T) {
	now := t0.Add(time.Hour)
	c := returning(t)
	e := &Engine{Options: options(), EventInterval: DefaultEventInterval}
	startReturn(t, e, c, now)
	failedAt := now.Add(delay + time.Minute)
	tick, err := e.Tick(c.in, map[string]ReplacementStatus{"default-r1": ReplacementFailed}, failedAt)
	if err != nil || tick.Annotate["nc-a"] == nil {
		t.Fatalf("tick %+v %v, want a's backoff", tick, err)
	}
	c.annotate("a", v1.ReturnAttemptsAnnotationKey, tick.Annotate["nc-a"][v1.ReturnAttemptsAnnotationKey],
		v1.ReturnNotBeforeAnnotationKey, tick.Annotate["nc-a"][v1.ReturnNotBeforeAnnotationKey])
	notBefore := failedAt.Add(20 * time.Minute)

	tick, err = e.Tick(c.in, nil, failedAt.Add(time.Second))
	if err != nil || tick.Planned == nil || tick.Started != nil {
		t.Fatalf("tick %+v %v, want a planning round deciding nothing", tick, err)
	}
	sameVerdicts(t, []Verdict{returnBlocked("a", "returning to spot waits until "+rfc3339(notBefore)+", after 1 failed attempt(s)")}, tick.Verdicts)
	if !tick.WakeAt.Equal(notBefore) {
		t.Errorf("wake at %s, want the not-before %s", tick.WakeAt, notBefore)
	}

	tick, err = e.Tick(c.in, nil, notBefore)
	if err != nil || tick.Started == nil || tick.Started.Method != "ReturnToPreferred" {
		t.Fatalf("tick %+v %v at the not-before, want the return started again", tick, err)
	}
}

// A failed command of another method backs nothing off, even for a
// fallback node.
func TestEngineFailedDriftSetsNoBackoff(t *testing.T) {
	c := newCluster("a", "b", "c")
	for _, n := range []string{"a", "b", "c"} {
		c.capacity(n, "4")
	}
	c.pod("web-b", "b", requests("1"))
	c.pod("web-c", "c", requests("1"))
	busyDrifted(c)
	// a fell back too: Drift comes first all the same.
	c.claim("a").Labels[v1.CapacityTypeLabelKey] = v1.CapacityTypeOnDemand
	c.annotate("a", provisioning.FallbackAnnotationKey, "spot unavailable")
	c.snapshot(m5...)
	e := &Engine{Options: options(), EventInterval: DefaultEventInterval}
	tick, err := e.Tick(c.in, nil, t0)
	if err != nil || tick.Started == nil || tick.Started.Method != "Drift" {
		t.Fatalf("tick %+v %v, want a Drift command started", tick, err)
	}
	tick, err = e.Tick(c.in, nil, t0.Add(delay))
	if err != nil || len(e.Replacements()) != 1 {
		t.Fatalf("tick %+v %v, want one replacement launched", tick, err)
	}
	tick, err = e.Tick(c.in, map[string]ReplacementStatus{e.Replacements()[0]: ReplacementFailed}, t0.Add(delay+time.Minute))
	if err != nil || tick.Finished == nil || tick.Finished.Method != "Drift" {
		t.Fatalf("tick %+v %v, want the Drift command abandoned", tick, err)
	}
	checkAbandoned(t, tick.Abandoned, "failed to launch or initialize")
	if tick.Annotate != nil {
		t.Errorf("annotate %v after a failed Drift command, want none", tick.Annotate)
	}
}

// A return abandoned at validation (a blocker appeared) backs nothing
// off: its replacement never launched.
func TestEngineReturnAbandonedAtValidationSetsNoBackoff(t *testing.T) {
	now := t0.Add(time.Hour)
	c := returning(t)
	e := &Engine{Options: options(), EventInterval: DefaultEventInterval}
	if tick, err := e.Tick(c.in, nil, now); err != nil || tick.Started == nil {
		t.Fatalf("tick %+v %v, want a return started", tick, err)
	}
	c.nodeNamed("a").Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: "true"}
	tick, err := e.Tick(c.in, nil, now.Add(delay))
	if err != nil || tick.Finished == nil {
		t.Fatalf("tick %+v %v, want the return abandoned", tick, err)
	}
	checkAbandoned(t, tick.Abandoned, "nodeclaim nc-a: node a has do-not-disrupt")
	if tick.Annotate != nil {
		t.Errorf("annotate %v, want none", tick.Annotate)
	}
}

func mergeAnnotations(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}
