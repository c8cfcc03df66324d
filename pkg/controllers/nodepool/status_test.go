package nodepool

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/admission"
	"github.com/capstan-dev/capstan/pkg/effects"
	"github.com/capstan-dev/capstan/pkg/test"
)

func claimWith(capacity corev1.ResourceList) v1.NodeClaim {
	nc := test.NodeClaim()
	nc.Status.Capacity = capacity
	return *nc
}

func rl(pairs ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(pairs); i += 2 {
		out[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return out
}

func TestResources(t *testing.T) {
	cases := []struct {
		name   string
		claims []v1.NodeClaim
		want   corev1.ResourceList
	}{
		{"no nodeclaims", nil, rl("nodes", "0")},
		{"two launched", []v1.NodeClaim{
			claimWith(rl("cpu", "4", "memory", "16Gi", "pods", "58")),
			claimWith(rl("cpu", "8", "memory", "32Gi", "pods", "58", "nvidia.com/gpu", "1")),
		}, rl("cpu", "12", "memory", "48Gi", "pods", "116", "nvidia.com/gpu", "1", "nodes", "2")},
		{"one not launched yet counts as a node", []v1.NodeClaim{
			claimWith(rl("cpu", "500m")),
			claimWith(nil),
		}, rl("cpu", "500m", "nodes", "2")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Resources(tc.claims)); diff != "" {
				t.Errorf("Resources (-want +got):\n%s", diff)
			}
		})
	}
}

func withBudgets(schedules ...string) func(*v1.NodePool) {
	return func(np *v1.NodePool) {
		for _, s := range schedules {
			np.Spec.Disruption.Budgets = append(np.Spec.Disruption.Budgets,
				v1.Budget{Nodes: "1", Schedule: ptr.To(s), Duration: &metav1.Duration{Duration: time.Hour}})
		}
	}
}

func withTimeZone(tz string) func(*v1.NodePool) {
	return func(np *v1.NodePool) {
		np.Annotations = map[string]string{v1.BudgetTimeZoneAnnotationKey: tz}
	}
}

func simRef(name string) *v1.NodeClassReference {
	return &v1.NodeClassReference{Group: simv1alpha1.Group, Kind: simv1alpha1.SimNodeClassKind, Name: name}
}

// simKinds are the sim provider's NodeClass kinds.
var simKinds = []schema.GroupVersionKind{simv1alpha1.SchemeGroupVersion.WithKind(simv1alpha1.SimNodeClassKind)}

// simNodeClass is the NodePool's view of a SimNodeClass "default" built
// by mods.
func simNodeClass(mods ...func(*simv1alpha1.SimNodeClass)) *NodeClass {
	nc := test.SimNodeClass(func(nc *simv1alpha1.SimNodeClass) { nc.Name = "default" })
	for _, mod := range mods {
		mod(nc)
	}
	return &NodeClass{Deleting: nc.DeletionTimestamp != nil, Ready: meta.FindStatusCondition(nc.Status.Conditions, simv1alpha1.ConditionTypeReady)}
}

func withReady(status metav1.ConditionStatus, reason, message string) func(*simv1alpha1.SimNodeClass) {
	return func(nc *simv1alpha1.SimNodeClass) {
		nc.Status.Conditions = []metav1.Condition{{Type: simv1alpha1.ConditionTypeReady, Status: status, Reason: reason, Message: message}}
	}
}

func TestNodeClassReady(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	cases := []struct {
		name    string
		ref     *v1.NodeClassReference
		nc      *NodeClass
		want    metav1.ConditionStatus
		reason  string
		message string
	}{
		{"ready", simRef("default"), simNodeClass(withReady(metav1.ConditionTrue, "Ready", "")),
			metav1.ConditionTrue, v1.ConditionTypeNodeClassReady, ""},
		{"missing", simRef("default"), nil,
			metav1.ConditionFalse, ReasonNodeClassNotFound, `SimNodeClass "default" not found`},
		{"no Ready condition yet", simRef("default"), simNodeClass(),
			metav1.ConditionFalse, ReasonNodeClassNotReady, "no Ready condition"},
		{"not ready", simRef("default"), simNodeClass(withReady(metav1.ConditionFalse, "InvalidSpotMaxPrice", "spotMaxPrice \"x\"")),
			metav1.ConditionFalse, ReasonNodeClassNotReady, `is not ready (InvalidSpotMaxPrice): spotMaxPrice "x"`},
		{"being deleted", simRef("default"), simNodeClass(withReady(metav1.ConditionTrue, "Ready", ""), func(nc *simv1alpha1.SimNodeClass) {
			nc.DeletionTimestamp = &now
		}), metav1.ConditionFalse, ReasonNodeClassNotReady, "being deleted"},
		{"another group", &v1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"}, nil,
			metav1.ConditionFalse, ReasonUnsupportedNodeClass, "EC2NodeClass karpenter.k8s.aws/default is not supported"},
		{"another kind in the sim group", &v1.NodeClassReference{Group: simv1alpha1.Group, Kind: "CloudProfile", Name: "default"}, nil,
			metav1.ConditionFalse, ReasonUnsupportedNodeClass, "not supported"},
		{"no reference", nil, nil, metav1.ConditionFalse, ReasonUnsupportedNodeClass, "not set"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := NodeClassReady(tc.ref, simKinds, tc.nc)
			if got.Type != v1.ConditionTypeNodeClassReady || got.Status != tc.want || got.Reason != tc.reason || !strings.Contains(got.Message, tc.message) {
				t.Errorf("condition %+v, want %s/%s with message containing %q", got, tc.want, tc.reason, tc.message)
			}
		})
	}
}

func cond(typ string, status metav1.ConditionStatus, reason, message string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: message}
}

func TestReady(t *testing.T) {
	valid := cond(v1.ConditionTypeValidationSucceeded, metav1.ConditionTrue, v1.ConditionTypeValidationSucceeded, "")
	invalid := cond(v1.ConditionTypeValidationSucceeded, metav1.ConditionFalse, admission.ReasonInvalidBudgetSchedule, "bad schedule")
	classReady := cond(v1.ConditionTypeNodeClassReady, metav1.ConditionTrue, v1.ConditionTypeNodeClassReady, "")
	classMissing := cond(v1.ConditionTypeNodeClassReady, metav1.ConditionFalse, ReasonNodeClassNotFound, "not found")
	classUnknown := cond(v1.ConditionTypeNodeClassReady, metav1.ConditionUnknown, ReasonUnsupportedNodeClass, "unsupported")
	cases := []struct {
		name string
		deps []metav1.Condition
		want metav1.Condition
	}{
		{"all true", []metav1.Condition{valid, classReady}, cond(v1.ConditionTypeReady, metav1.ConditionTrue, v1.ConditionTypeReady, "")},
		{"one false", []metav1.Condition{valid, classMissing},
			cond(v1.ConditionTypeReady, metav1.ConditionFalse, ReasonNodeClassNotFound, "NodeClassReady: not found")},
		{"false wins over unknown", []metav1.Condition{classUnknown, invalid},
			cond(v1.ConditionTypeReady, metav1.ConditionFalse, admission.ReasonInvalidBudgetSchedule, "ValidationSucceeded: bad schedule")},
		{"unknown", []metav1.Condition{valid, classUnknown},
			cond(v1.ConditionTypeReady, metav1.ConditionUnknown, ReasonUnsupportedNodeClass, "NodeClassReady: unsupported")},
		{"false without a message", []metav1.Condition{cond("X", metav1.ConditionFalse, "Broken", "")},
			cond(v1.ConditionTypeReady, metav1.ConditionFalse, "Broken", "X")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, admission.NodePoolReady(tc.deps...)); diff != "" {
				t.Errorf("Ready (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStep(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	t1 := t0.Add(time.Hour)
	np := test.NodePool(func(np *v1.NodePool) { np.Generation = 3 })
	ready := simNodeClass(withReady(metav1.ConditionTrue, "Ready", ""))
	claims := []v1.NodeClaim{claimWith(rl("cpu", "2"))}

	first := Step(Input{NodePool: np, NodeClaims: claims, Supported: simKinds}, t0)
	wantAnnotations := map[string]string{v1.NodePoolHashAnnotationKey: np.Hash(), v1.NodePoolHashVersionAnnotationKey: "v1"}
	if diff := cmp.Diff(wantAnnotations, first.Annotations); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(rl("cpu", "2", "nodes", "1"), first.Status.Resources); diff != "" {
		t.Errorf("resources (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(ptr.To[int64](1), first.Status.Nodes); diff != "" {
		t.Errorf("status.nodes (-want +got):\n%s", diff)
	}
	at := func(c metav1.Condition, when time.Time) metav1.Condition {
		c.LastTransitionTime, c.ObservedGeneration = metav1.NewTime(when), 3
		return c
	}
	byType := cmpopts.SortSlices(func(a, b metav1.Condition) bool { return a.Type < b.Type })
	want := []metav1.Condition{
		at(cond(v1.ConditionTypeValidationSucceeded, metav1.ConditionTrue, v1.ConditionTypeValidationSucceeded, ""), t0),
		at(cond(v1.ConditionTypeNodeClassReady, metav1.ConditionFalse, ReasonNodeClassNotFound, `SimNodeClass "default" not found: no nodes are launched from this NodePool until it exists`), t0),
		at(cond(v1.ConditionTypeReady, metav1.ConditionFalse, ReasonNodeClassNotFound, `NodeClassReady: SimNodeClass "default" not found: no nodes are launched from this NodePool until it exists`), t0),
	}
	if diff := cmp.Diff(want, first.Status.Conditions, byType); diff != "" {
		t.Errorf("first conditions (-want +got):\n%s", diff)
	}
	if len(np.Status.Conditions) != 0 || np.Status.Resources != nil {
		t.Errorf("Step modified its input: %+v", np.Status)
	}

	// An hour later the NodeClass exists and is ready: the two conditions
	// that changed move to t1, ValidationSucceeded keeps t0.
	np.Status = first.Status
	second := Step(Input{NodePool: np, NodeClaims: claims, Supported: simKinds, NodeClass: ready}, t1)
	want = []metav1.Condition{
		at(cond(v1.ConditionTypeValidationSucceeded, metav1.ConditionTrue, v1.ConditionTypeValidationSucceeded, ""), t0),
		at(cond(v1.ConditionTypeNodeClassReady, metav1.ConditionTrue, v1.ConditionTypeNodeClassReady, ""), t1),
		at(cond(v1.ConditionTypeReady, metav1.ConditionTrue, v1.ConditionTypeReady, ""), t1),
	}
	if diff := cmp.Diff(want, second.Status.Conditions, byType); diff != "" {
		t.Errorf("second conditions (-want +got):\n%s", diff)
	}

	// Nothing changed: the same status again.
	np.Status = second.Status
	if diff := cmp.Diff(second, Step(Input{NodePool: np, NodeClaims: claims, Supported: simKinds, NodeClass: ready}, t1.Add(time.Hour))); diff != "" {
		t.Errorf("a step without change (-want +got):\n%s", diff)
	}
}

func TestReferences(t *testing.T) {
	cases := []struct {
		name string
		ref  *v1.NodeClassReference
		want bool
	}{
		{"the name", simRef("a"), true},
		{"another name", simRef("b"), false},
		{"another group", &v1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: simv1alpha1.SimNodeClassKind, Name: "a"}, false},
		{"another kind", &v1.NodeClassReference{Group: simv1alpha1.Group, Kind: "EC2NodeClass", Name: "a"}, false},
		{"no reference", nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			np := test.NodePool(func(np *v1.NodePool) { np.Spec.Template.Spec.NodeClassRef = tc.ref })
			if got := References(np, simKinds[0].GroupKind(), "a"); got != tc.want {
				t.Errorf("References = %t, want %t", got, tc.want)
			}
		})
	}
}

func TestHasAnnotations(t *testing.T) {
	want := map[string]string{"a": "1", "b": ""}
	cases := []struct {
		have map[string]string
		ok   bool
	}{
		{nil, false},
		{map[string]string{"a": "1"}, false},
		{map[string]string{"a": "1", "b": "x"}, false},
		{map[string]string{"a": "1", "b": ""}, true},
		{map[string]string{"a": "1", "b": "", "c": "3"}, true},
	}
	for _, tc := range cases {
		if got := hasAnnotations(tc.have, want); got != tc.ok {
			t.Errorf("hasAnnotations(%v) = %t, want %t", tc.have, got, tc.ok)
		}
	}
}

func TestFailureEvents(t *testing.T) {
	ready := cond(v1.ConditionTypeNodeClassReady, metav1.ConditionTrue, v1.ConditionTypeNodeClassReady, "")
	missing := cond(v1.ConditionTypeNodeClassReady, metav1.ConditionFalse, ReasonNodeClassNotFound, "not found")
	unsupported := cond(v1.ConditionTypeNodeClassReady, metav1.ConditionFalse, ReasonUnsupportedNodeClass, "not supported")
	valid := cond(v1.ConditionTypeValidationSucceeded, metav1.ConditionTrue, v1.ConditionTypeValidationSucceeded, "")
	badRebalance := cond(v1.ConditionTypeValidationSucceeded, metav1.ConditionFalse, admission.ReasonInvalidRebalance, "annotation capstan.dev/rebalance")
	cases := []struct {
		name     string
		old, new []metav1.Condition
		want     []string
	}{
		{"first reconcile finds it missing", nil, []metav1.Condition{missing}, []string{ReasonNodeClassNotFound}},
		{"ready turns missing", []metav1.Condition{ready}, []metav1.Condition{missing}, []string{ReasonNodeClassNotFound}},
		{"still missing", []metav1.Condition{missing}, []metav1.Condition{missing}, nil},
		{"another reason", []metav1.Condition{missing}, []metav1.Condition{unsupported}, []string{ReasonUnsupportedNodeClass}},
		{"ready", []metav1.Condition{missing}, []metav1.Condition{ready}, nil},
		{"no condition", nil, nil, nil},
		{"an annotation Capstan does not know", []metav1.Condition{ready, valid}, []metav1.Condition{ready, badRebalance}, []string{admission.ReasonInvalidRebalance}},
		{"still invalid", []metav1.Condition{badRebalance}, []metav1.Condition{badRebalance}, nil},
		{"both at once", nil, []metav1.Condition{missing, badRebalance}, []string{ReasonNodeClassNotFound, admission.ReasonInvalidRebalance}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, ev := range FailureEvents(tc.old, tc.new) {
				got = append(got, ev.Reason)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("FailureEvents reasons (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecisionEffects(t *testing.T) {
	failed := metav1.Condition{Type: v1.ConditionTypeNodeClassReady, Status: metav1.ConditionFalse, Reason: "NodeClassNotFound", Message: "not found"}
	np := &v1.NodePool{}
	np.Name = "default"
	np.Annotations = map[string]string{v1.NodePoolHashAnnotationKey: "1"}
	ref := effects.NodePoolRef("default")
	for _, tc := range []struct {
		name string
		np   *v1.NodePool
		d    Decision
		want []effects.Effect
	}{
		{name: "nothing changed", np: np, d: Decision{Annotations: np.Annotations}},
		{name: "a new hash", np: np, d: Decision{Annotations: map[string]string{v1.NodePoolHashAnnotationKey: "2"}},
			want: []effects.Effect{effects.MergeMetadata{Object: ref, Annotations: map[string]string{v1.NodePoolHashAnnotationKey: "2"}}}},
		{name: "a failure begins", np: np, d: Decision{Annotations: np.Annotations, Status: v1.NodePoolStatus{Conditions: []metav1.Condition{failed}}},
			want: []effects.Effect{
				effects.Event{Object: ref, Type: corev1.EventTypeWarning, Reason: failed.Reason, Action: "Provision", Message: "not found"},
				effects.SetNodePoolStatus{Name: "default", Status: v1.NodePoolStatus{Conditions: []metav1.Condition{failed}}},
			}},
	} {
		if diff := cmp.Diff(tc.want, tc.d.Effects(tc.np)); diff != "" {
			t.Errorf("%s: (-want +got):\n%s", tc.name, diff)
		}
	}
}
