package explain_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/disruption"
	"github.com/capstan-dev/capstan/pkg/explain"
	"github.com/capstan-dev/capstan/pkg/gang"
	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/state"
	"github.com/capstan-dev/capstan/pkg/test"
)

func TestExplainNode(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	nc := &v1.NodeClaim{}
	nc.Name = "web-abcde"
	nc.Labels = map[string]string{v1.NodePoolLabelKey: "web", v1.LabelInstanceType: "c4.xlarge", v1.CapacityTypeLabelKey: "on-demand", v1.LabelZone: "z1"}
	nc.Annotations = map[string]string{provisioning.PreferredAnnotationKey: "c4.xlarge/spot", provisioning.FallbackAnnotationKey: "preferred capacity unavailable: spot/c4.xlarge/z1 InsufficientInstanceCapacity"}
	for _, tc := range []struct {
		conds []string
		want  string
	}{
		{nil, "Launching"},
		{[]string{v1.ConditionTypeLaunched}, "Registering"},
		{[]string{v1.ConditionTypeLaunched, v1.ConditionTypeRegistered}, "Initializing"},
		{[]string{v1.ConditionTypeLaunched, v1.ConditionTypeRegistered, v1.ConditionTypeInitialized}, "Ready"},
	} {
		nc.Status.Conditions = nil
		for _, c := range tc.conds {
			nc.Status.Conditions = append(nc.Status.Conditions, metav1.Condition{Type: c, Status: metav1.ConditionTrue, LastTransitionTime: at})
		}
		got := explain.ForNode(explain.NodeInput{NodeClaim: nc, Disruption: &disruption.Input{}, Now: at.Time})
		if got.Lifecycle != tc.want || len(got.Conditions) != len(tc.conds) {
			t.Errorf("conditions %v: lifecycle %s, want %s", tc.conds, got.Lifecycle, tc.want)
		}
		if got.Preferred != "c4.xlarge/spot" || got.CapacityType != "on-demand" || got.Fallback == "" || got.Disruption == "" {
			t.Errorf("provenance: %+v", got)
		}
	}
	if got := explain.ForNode(explain.NodeInput{NodeClaim: nc}); got.ExpiresAt != nil {
		t.Errorf("expires at %s without an expireAfter", got.ExpiresAt)
	}
	nc.CreationTimestamp = at
	nc.Spec.ExpireAfter = v1.MustParseNillableDuration("720h")
	got := explain.ForNode(explain.NodeInput{NodeClaim: nc})
	if got.ExpiresAt == nil || !got.ExpiresAt.Equal(at.Add(720*time.Hour)) {
		t.Errorf("expires at %v, want 30 days after creation", got.ExpiresAt)
	}
	var text strings.Builder
	if err := explain.WriteNode(&text, got); err != nil || !strings.Contains(text.String(), "expires: 2026-01-31T00:00:00Z (expireAfter)") {
		t.Errorf("text %q (%v) does not say when it expires", text.String(), err)
	}
	nc.Spec.ExpireAfter = v1.MustParseNillableDuration(v1.Never)
	if got := explain.ForNode(explain.NodeInput{NodeClaim: nc}); got.ExpiresAt != nil {
		t.Errorf("expireAfter Never expires at %s", got.ExpiresAt)
	}
	nc.DeletionTimestamp = &at
	if got := explain.ForNode(explain.NodeInput{NodeClaim: nc}); got.Lifecycle != "Deleting" || got.DisruptionStatus != explain.DisruptionDeleting {
		t.Errorf("lifecycle %s (%s), want Deleting", got.Lifecycle, got.DisruptionStatus)
	}
	nc.DeletionTimestamp = nil
	if got := explain.ForNode(explain.NodeInput{NodeClaim: nc}); got.Candidate || len(got.Unknown) != 1 {
		t.Errorf("without the cluster's objects: %+v", got)
	}
}

var now = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

// world is a small cluster: NodePool "web" (consolidateAfter 0s, budget
// 100%) and one initialized, Ready node per name, each created an hour
// ago with no pod event since.
type world struct {
	objs state.Objects
	its  []*cloudprovider.InstanceType
}

func newWorld(nodes ...string) *world {
	w := &world{}
	w.objs.NodePools = []v1.NodePool{*test.NodePool(func(np *v1.NodePool) {
		np.Name = "web"
		np.Spec.Disruption.ConsolidateAfter = v1.MustParseNillableDuration("0s")
		np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "100%"}}
	})}
	for _, n := range nodes {
		w.node(n)
	}
	return w
}

func (w *world) pool() *v1.NodePool { return &w.objs.NodePools[0] }

func (w *world) node(name string) {
	nc := test.NodeClaim(func(nc *v1.NodeClaim) {
		nc.Name = "nc-" + name
		nc.CreationTimestamp = metav1.NewTime(now.Add(-time.Hour))
		nc.Labels = map[string]string{v1.NodePoolLabelKey: "web"}
		nc.Status.NodeName, nc.Status.ProviderID = name, "sim://"+name
		nc.Status.Conditions = []metav1.Condition{{Type: v1.ConditionTypeInitialized, Status: metav1.ConditionTrue}}
	})
	w.objs.NodeClaims = append(w.objs.NodeClaims, *nc)
	w.objs.Nodes = append(w.objs.Nodes, corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.NodePoolLabelKey: "web"}},
		Spec:       corev1.NodeSpec{ProviderID: "sim://" + name},
		Status:     corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}},
	})
}

func (w *world) claim(node string) *v1.NodeClaim {
	for i := range w.objs.NodeClaims {
		if w.objs.NodeClaims[i].Status.NodeName == node {
			return &w.objs.NodeClaims[i]
		}
	}
	panic("no nodeclaim for " + node)
}

func (w *world) nodeNamed(name string) *corev1.Node {
	for i := range w.objs.Nodes {
		if w.objs.Nodes[i].Name == name {
			return &w.objs.Nodes[i]
		}
	}
	panic("no node " + name)
}

// capacity gives a node room for cpu cores.
func (w *world) capacity(node, cpu string) {
	n := w.nodeNamed(node)
	n.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("16Gi"), corev1.ResourcePods: resource.MustParse("110")}
	n.Status.Capacity = n.Status.Allocatable.DeepCopy()
}

// pod binds a pod (app=web, 1 CPU) to node; "" leaves it pending,
// marked unschedulable.
func (w *world) pod(name, node string, mods ...func(*corev1.Pod)) {
	p := test.Pod("default", func(p *corev1.Pod) {
		p.Name, p.Spec.NodeName, p.Labels = name, node, map[string]string{"app": "web"}
		p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("1")
		if node == "" {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}
		}
	})
	for _, m := range mods {
		m(p)
	}
	w.objs.Pods = append(w.objs.Pods, *p)
}

func (w *world) drift(node string) {
	meta.SetStatusCondition(&w.claim(node).Status.Conditions, metav1.Condition{Type: v1.ConditionTypeDrifted, Status: metav1.ConditionTrue,
		Reason: disruption.DriftNodePool, Message: "the NodePool's template changed", LastTransitionTime: metav1.NewTime(now.Add(-10 * time.Minute))})
}

func (w *world) budget(b ...v1.Budget) { w.pool().Spec.Disruption.Budgets = b }

func (w *world) input() *disruption.Input {
	snapshot := state.Build(w.objs, map[string][]*cloudprovider.InstanceType{"web": w.its}, []string{corev1.DefaultSchedulerName})
	in := disruption.NewInput(w.objs, snapshot, disruption.Policies{})
	return &in
}

func doNotDisrupt(p *corev1.Pod) {
	p.Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: "true"}
}

// view is the disruption part of a node's answer.
type view struct {
	Status, Sentence, BlockedBy, Reason, Method string
	Candidate                                   bool
	Drifted                                     bool
	Pods                                        *int
	ConsolidateAfter                            string
	ConsolidatableAt                            *time.Time
	Allowed                                     map[string]int
	Verdicts                                    []explain.DisruptionVerdict
	Unknown                                     []string
}

func viewOf(n explain.Node) view {
	return view{Status: n.DisruptionStatus, Sentence: n.Disruption, BlockedBy: n.DisruptionBlockedBy, Reason: n.DisruptionReason, Method: n.DisruptionMethod,
		Candidate: n.Candidate, Drifted: n.Drifted != nil, Pods: n.Pods, ConsolidateAfter: n.ConsolidateAfter, ConsolidatableAt: n.ConsolidatableAt,
		Allowed: n.DisruptionsAllowed, Verdicts: n.DisruptionVerdicts, Unknown: n.Unknown}
}

// The node's disruption answer is the disruption controller's own: its
// candidates and blockers, drift, emptiness, budgets and what
// disruption.Plan decides with the controller's methods.
func TestExplainNodeDisruption(t *testing.T) {
	hourAgo := now.Add(-time.Hour)
	all := func(n int) map[string]int { return map[string]int{"Empty": n, "Drifted": n, "Underutilized": n} }
	// candidate is the view of an initialized candidate in world a, b…
	candidate := func(pods int, v view) view {
		v.Candidate, v.Pods, v.ConsolidateAfter = true, ptr.To(pods), "0s"
		if v.ConsolidatableAt == nil {
			v.ConsolidatableAt = &hourAgo
		}
		if v.Allowed == nil {
			v.Allowed = all(1)
		}
		return v
	}
	disruptedAt := metav1.NewTime(now.Add(-time.Minute))
	withReason := func(nc *v1.NodeClaim) {
		meta.SetStatusCondition(&nc.Status.Conditions, metav1.Condition{Type: v1.ConditionTypeDisruptionReason, Status: metav1.ConditionTrue,
			Reason: "Empty", Message: "Emptiness", LastTransitionTime: disruptedAt})
	}
	for _, tc := range []struct {
		name    string
		setup   func(w *world)
		node    string // default a
		drift   bool
		offline bool
		want    view
		// contains replaces an exact sentence where the solver words it.
		contains string
	}{
		{
			name:  "no NodePool owns it",
			setup: func(w *world) { delete(w.claim("a").Labels, v1.NodePoolLabelKey) },
			want:  view{Status: "NotCandidate", Sentence: "not a disruption candidate: no NodePool owns it"},
		},
		{
			name:  "NodePool gone",
			setup: func(w *world) { w.claim("a").Labels[v1.NodePoolLabelKey] = "gone" },
			want:  view{Status: "NotCandidate", Sentence: "not a disruption candidate: its NodePool gone is gone or being deleted"},
		},
		{
			name:  "not registered",
			setup: func(w *world) { w.claim("a").Status.NodeName = "" },
			want:  view{Status: "NotCandidate", Sentence: "not a disruption candidate: its Node has not registered yet"},
		},
		{
			name: "being deleted by disruption",
			setup: func(w *world) {
				withReason(w.claim("a"))
				w.claim("a").DeletionTimestamp = &disruptedAt
			},
			want: view{Status: "Deleting", Sentence: "the NodeClaim is being deleted: disrupted (Empty, by Emptiness)", Reason: "Empty", Method: "Emptiness"},
		},
		{
			name:  "being deleted otherwise",
			setup: func(w *world) { w.claim("a").DeletionTimestamp = &disruptedAt },
			want:  view{Status: "Deleting", Sentence: "the NodeClaim is being deleted (no disruption reason recorded: deleted by hand, interrupted, expired or unhealthy)"},
		},
		{
			name:  "its Node being deleted",
			setup: func(w *world) { w.nodeNamed("a").DeletionTimestamp = &disruptedAt },
			want: candidate(0, view{Status: "Deleting", BlockedBy: "node is being deleted", Allowed: all(0),
				Sentence: "its Node is being deleted (no disruption reason recorded: deleted by hand, interrupted, expired or unhealthy)"}),
		},
		{
			name:  "being disrupted, replacements launching",
			setup: func(w *world) { withReason(w.claim("a")) },
			want: candidate(0, view{Status: "Disrupting", Reason: "Empty", Method: "Emptiness",
				Sentence: "being disrupted (Empty, by Emptiness) since 2026-03-10T11:59:00Z: tainted karpenter.sh/disrupted; it is deleted once any replacements have initialized"}),
		},
		{
			name:  "not initialized",
			setup: func(w *world) { w.claim("a").Status.Conditions = nil },
			want: candidate(0, view{Status: "Blocked", BlockedBy: "node is not initialized",
				Sentence: "empty and consolidatable since 2026-03-10T11:00:00Z; disruption is blocked: node is not initialized"}),
		},
		{
			name:  "pod with do-not-disrupt",
			setup: func(w *world) { w.pod("x", "a", doNotDisrupt) },
			want: candidate(1, view{Status: "Blocked", BlockedBy: "pod default/x has do-not-disrupt",
				Sentence: "disruption is blocked: pod default/x has do-not-disrupt"}),
		},
		{
			name: "a PDB allows no eviction",
			setup: func(w *world) {
				w.pod("x", "a")
				w.objs.PDBs = append(w.objs.PDBs, policyv1.PodDisruptionBudget{
					ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
					Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
				})
			},
			want: candidate(1, view{Status: "Blocked", BlockedBy: "pdb default/web prevents pod evictions",
				Sentence: "disruption is blocked: pdb default/web prevents pod evictions"}),
		},
		{
			name: "part of a gang that runs on another node too",
			setup: func(w *world) {
				inGang := func(p *corev1.Pod) { p.Annotations = map[string]string{gang.AtomicGroupAnnotationKey: "ml/train"} }
				w.pod("w0", "a", inGang)
				w.pod("w1", "elsewhere", inGang)
			},
			want: candidate(1, view{Status: "Blocked", BlockedBy: "pod default/w0 belongs to gang ml/train, which runs on 2 nodes; a gang is moved only as a whole",
				Sentence: "disruption is blocked: pod default/w0 belongs to gang ml/train, which runs on 2 nodes; a gang is moved only as a whole"}),
		},
		{
			name:  "node with do-not-disrupt",
			setup: func(w *world) { w.nodeNamed("a").Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: "true"} },
			want: candidate(0, view{Status: "Blocked", BlockedBy: "node a has do-not-disrupt",
				Sentence: "empty and consolidatable since 2026-03-10T11:00:00Z; disruption is blocked: node a has do-not-disrupt"}),
		},
		{
			name: "nominated for a pending pod",
			setup: func(w *world) {
				w.capacity("a", "4")
				w.pod("pending", "")
			},
			want: candidate(0, view{Status: "Blocked", BlockedBy: "node is nominated for a pending pod",
				Sentence: "empty and consolidatable since 2026-03-10T11:00:00Z; disruption is blocked: node is nominated for a pending pod"}),
		},
		{
			name:  "drifted and empty: Drift takes it",
			setup: func(w *world) { w.drift("a") },
			drift: true,
			want: candidate(0, view{Status: "Next", Reason: "Drifted", Method: "Drift", Drifted: true,
				Sentence: "drifted since 2026-03-10T11:50:00Z (NodePoolDrifted: the NodePool's template changed); empty and consolidatable since 2026-03-10T11:00:00Z; the next planning round disrupts it: Drift (Drifted)"}),
		},
		{
			name: "drifted and busy: its pod fits on another node",
			setup: func(w *world) {
				w.node("b")
				w.capacity("b", "4")
				w.drift("a")
				w.pod("x", "a")
			},
			drift: true,
			want: candidate(1, view{Status: "Next", Reason: "Drifted", Method: "Drift", Drifted: true, Allowed: all(2),
				Sentence: "drifted since 2026-03-10T11:50:00Z (NodePoolDrifted: the NodePool's template changed); it runs 1 pod; the next planning round disrupts it: Drift (Drifted)"}),
		},
		// docs/disruption.md, "Drift and terminationGracePeriod".
		{
			name: "drifted with a terminationGracePeriod: a do-not-disrupt pod does not hold Drift",
			setup: func(w *world) {
				w.node("b")
				w.capacity("b", "4")
				w.drift("a")
				w.claim("a").Spec.TerminationGracePeriod = &metav1.Duration{Duration: time.Hour}
				w.pod("x", "a", doNotDisrupt)
			},
			drift: true,
			want: candidate(1, view{Status: "Next", Reason: "Drifted", Method: "Drift", Drifted: true, Allowed: all(2), BlockedBy: "pod default/x has do-not-disrupt",
				Sentence: "drifted since 2026-03-10T11:50:00Z (NodePoolDrifted: the NodePool's template changed); it runs 1 pod; the next planning round disrupts it: Drift (Drifted)"}),
		},
		{
			name: "drifted and busy: its pod fits nowhere",
			setup: func(w *world) {
				w.drift("a")
				w.pod("x", "a")
			},
			drift:    true,
			contains: "it runs 1 pod; Drift may not disrupt it now: pod default/x would not schedule without the node: ",
		},
		{
			name: "drifted and busy, offline: where its pod would go is the controller's to know",
			setup: func(w *world) {
				w.drift("a")
				w.pod("x", "a")
			},
			offline: true,
			want: candidate(1, view{Status: "Held", Drifted: true,
				Sentence: "drifted since 2026-03-10T11:50:00Z (NodePoolDrifted: the NodePool's template changed); it runs 1 pod; whether its pods fit elsewhere is known to the controller",
				Unknown: []string{
					"the Drift feature gate: the controller's (pass --controller-address); a Drifted condition is taken to mean it is on",
					"where a drifted node's pods would go: replacements need the cloud's instance types (pass --controller-address)",
				}}),
		},
		{
			name: "drifted, the Drifted budget is 0",
			setup: func(w *world) {
				w.drift("a")
				w.pod("x", "a")
				w.budget(v1.Budget{Nodes: "100%"}, v1.Budget{Nodes: "0", Reasons: []v1.DisruptionReason{v1.DisruptionReasonDrifted}})
			},
			drift: true,
			want: candidate(1, view{Status: "Held", Drifted: true, Allowed: map[string]int{"Empty": 1, "Drifted": 0, "Underutilized": 1},
				Verdicts: []explain.DisruptionVerdict{{Method: "Drift", Event: "DisruptionBlocked", Message: "disruption budget of 0 for Drifted"}},
				Sentence: "drifted since 2026-03-10T11:50:00Z (NodePoolDrifted: the NodePool's template changed); it runs 1 pod; Drift may not disrupt it now: disruption budget of 0 for Drifted"}),
		},
		{
			name: "drifted with the Drift gate off",
			setup: func(w *world) {
				w.drift("a")
				w.pod("x", "a")
			},
			want: candidate(1, view{Status: "None", Drifted: true,
				Sentence: "drifted since 2026-03-10T11:50:00Z (NodePoolDrifted: the NodePool's template changed); it runs 1 pod; the Drift feature gate is off: drift does not replace it"}),
		},
		{
			name:  "empty and consolidatable",
			setup: func(*world) {},
			want: candidate(0, view{Status: "Next", Reason: "Empty", Method: "Emptiness",
				Sentence: "empty and consolidatable since 2026-03-10T11:00:00Z; the next planning round disrupts it: Emptiness (Empty)"}),
		},
		{
			name: "empty, consolidatable later",
			setup: func(w *world) {
				w.pool().Spec.Disruption.ConsolidateAfter = v1.MustParseNillableDuration("90m")
			},
			want: func() view {
				v := candidate(0, view{Status: "Waiting", ConsolidatableAt: ptr.To(now.Add(30 * time.Minute)),
					Sentence: "empty; consolidatable at 2026-03-10T12:30:00Z (consolidateAfter 1h30m0s after it initialized)"})
				v.ConsolidateAfter = "1h30m0s"
				return v
			}(),
		},
		{
			name: "empty, consolidateAfter: Never",
			setup: func(w *world) {
				w.pool().Spec.Disruption.ConsolidateAfter = v1.MustParseNillableDuration("Never")
			},
			want: view{Status: "None", Candidate: true, Pods: ptr.To(0), ConsolidateAfter: "Never", Allowed: all(1),
				Sentence: "empty, but consolidateAfter: Never keeps empty nodes"},
		},
		{
			name: "empty, in a static NodePool",
			setup: func(w *world) {
				w.pool().Spec.Replicas = ptr.To[int64](1)
			},
			want: view{Status: "None", Candidate: true, Pods: ptr.To(0), ConsolidateAfter: "0s", Allowed: all(1),
				Sentence: "empty, but a static NodePool keeps its replicas: never consolidated"},
		},
		{
			name: "empty, the Empty budget is 0",
			setup: func(w *world) {
				w.budget(v1.Budget{Nodes: "0", Reasons: []v1.DisruptionReason{v1.DisruptionReasonEmpty}})
			},
			want: candidate(0, view{Status: "Held", Allowed: map[string]int{"Empty": 0, "Drifted": 1, "Underutilized": 1},
				Verdicts: []explain.DisruptionVerdict{{Method: "Emptiness", Event: "Unconsolidatable", Message: "disruption budget of 0 for Empty"}},
				Sentence: "empty and consolidatable since 2026-03-10T11:00:00Z; Emptiness may not disrupt it now: disruption budget of 0 for Empty"}),
		},
		{
			name: "empty, another node goes first",
			setup: func(w *world) {
				w.node("b")
				w.budget(v1.Budget{Nodes: "1"})
			},
			node: "b",
			want: candidate(0, view{Status: "Held",
				Sentence: "empty and consolidatable since 2026-03-10T11:00:00Z; the next planning round disrupts nc-a first (Emptiness, Empty)"}),
		},
		{
			name: "busy",
			setup: func(w *world) {
				w.pod("x", "a")
				w.pod("y", "a")
			},
			want: candidate(2, view{Status: "None", Sentence: "nothing to disrupt: it runs 2 pods and no method disrupts it this round"}),
		},
		{
			name: "busy, under WhenEmpty",
			setup: func(w *world) {
				w.pod("x", "a")
				w.pool().Spec.Disruption.ConsolidationPolicy = v1.ConsolidationPolicyWhenEmpty
			},
			want: candidate(1, view{Status: "None", Sentence: "nothing to disrupt: it runs 1 pod and its NodePool consolidates only empty nodes (consolidationPolicy: WhenEmpty)"}),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld("a")
			tc.setup(w)
			node := tc.node
			if node == "" {
				node = "a"
			}
			var nc *v1.NodeClaim
			for i := range w.objs.NodeClaims {
				if w.objs.NodeClaims[i].Name == "nc-"+node {
					nc = w.objs.NodeClaims[i].DeepCopy()
				}
			}
			got := explain.ForNode(explain.NodeInput{NodeClaim: nc, Disruption: w.input(), Drift: tc.drift, Offline: tc.offline, Now: now})
			if tc.contains != "" {
				if !strings.Contains(got.Disruption, tc.contains) || got.DisruptionStatus != explain.DisruptionHeld || len(got.DisruptionVerdicts) != 1 {
					t.Errorf("got %q (%s, %v), want it to contain %q", got.Disruption, got.DisruptionStatus, got.DisruptionVerdicts, tc.contains)
				}
				return
			}
			if diff := cmp.Diff(tc.want, viewOf(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// A node that fell back from spot says whether and when it returns.
func TestExplainNodeReturn(t *testing.T) {
	np := test.NodePool(func(np *v1.NodePool) {
		np.Name = "web"
		np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{
			{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{v1.CapacityTypeSpot, v1.CapacityTypeOnDemand}},
		}
	})
	nc := &v1.NodeClaim{}
	nc.Name = "web-abcde"
	nc.Labels = map[string]string{v1.NodePoolLabelKey: "web", v1.CapacityTypeLabelKey: v1.CapacityTypeOnDemand}
	nc.Annotations = map[string]string{provisioning.FallbackAnnotationKey: "preferred capacity unavailable: spot/c4.xlarge/z1 InsufficientInstanceCapacity"}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		capacity    string
		want        string
	}{
		{"enabled by default", nil, v1.CapacityTypeOnDemand, "fell back from spot; returns once spot has been available for 10m0s and a spot replacement is cheaper"},
		{"disabled", map[string]string{v1.ReturnToPreferredAnnotationKey: v1.ReturnToPreferredDisabled}, v1.CapacityTypeOnDemand,
			"fell back from spot; stays on-demand: its NodePool's capstan.dev/return-to-preferred is Disabled"},
		{"on spot already", nil, v1.CapacityTypeSpot, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pool := np.DeepCopy()
			pool.Annotations = tc.annotations
			claim := nc.DeepCopy()
			claim.Labels[v1.CapacityTypeLabelKey] = tc.capacity
			got := explain.ForNode(explain.NodeInput{NodeClaim: claim, Disruption: &disruption.Input{NodePools: []*v1.NodePool{pool}}, Now: at})
			if got.Return != tc.want {
				t.Errorf("return %q, want %q", got.Return, tc.want)
			}
		})
	}
}

// A node that fell back from a full reservation of its instance type
// says it returns to one; without the reservation it is no fallback.
func TestExplainNodeReturnToReservation(t *testing.T) {
	cts := []string{v1.CapacityTypeReserved, v1.CapacityTypeOnDemand}
	np := test.NodePool(func(np *v1.NodePool) {
		np.Name = "web"
		np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: cts}}
	})
	nc := test.NodeClaim(func(nc *v1.NodeClaim) {
		nc.Name = "web-abcde"
		nc.Labels = map[string]string{v1.NodePoolLabelKey: "web", v1.CapacityTypeLabelKey: v1.CapacityTypeOnDemand, v1.LabelInstanceType: "c4.xlarge", v1.LabelZone: "z1"}
		nc.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: cts}}
	})
	offerings := func(reserved string) cloudprovider.Offerings {
		return cloudprovider.Offerings{
			{Zone: "z1", CapacityType: v1.CapacityTypeOnDemand, Price: 0.2, Available: cloudprovider.Unlimited},
			{Zone: reserved, CapacityType: v1.CapacityTypeReserved, ReservationID: "cr-1", Price: 2e-8},
		}
	}
	for _, tc := range []struct {
		name, zone, want string
	}{
		{"a reservation in its zone", "z1", "fell back from reserved capacity; returns once reserved capacity has been available for 10m0s and a reserved capacity replacement is cheaper"},
		{"a reservation in another zone", "z2", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := &disruption.Input{NodePools: []*v1.NodePool{np}}
			in.Snapshot.Input.InstanceTypes = map[string][]*cloudprovider.InstanceType{
				"web": {test.InstanceType(test.InstanceTypeOptions{Name: "c4.xlarge", CPU: 4, Memory: 8, Offerings: offerings(tc.zone)})},
			}
			got := explain.ForNode(explain.NodeInput{NodeClaim: nc, Disruption: in, Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
			if got.Return != tc.want {
				t.Errorf("return %q, want %q", got.Return, tc.want)
			}
		})
	}
}

// A node whose pod runs on a later one of its ordered terms (an llmaz
// flavor after the first) says whether and when it returns.
func TestExplainNodeReturnTerm(t *testing.T) {
	np := test.NodePool(func(np *v1.NodePool) { np.Name = "gpu" })
	nc := test.NodeClaim(func(nc *v1.NodeClaim) {
		nc.Name = "gpu-abcde"
		nc.Labels = map[string]string{v1.NodePoolLabelKey: "gpu", v1.CapacityTypeLabelKey: v1.CapacityTypeOnDemand}
		nc.Annotations = map[string]string{provisioning.FlavorAnnotationKey: "a10g (2 of 2)"}
		nc.Status.NodeName, nc.Status.ProviderID = "node-1", "sim://node-1"
		nc.Status.Conditions = []metav1.Condition{{Type: v1.ConditionTypeInitialized, Status: metav1.ConditionTrue}}
	})
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", Labels: map[string]string{v1.NodePoolLabelKey: "gpu", v1.LabelInstanceGPUName: "a10g"}},
		Spec:   corev1.NodeSpec{ProviderID: "sim://node-1"},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	term := func(gpu string) corev1.NodeSelectorTerm {
		return corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: v1.LabelInstanceGPUName, Operator: corev1.NodeSelectorOpIn, Values: []string{gpu}}}}
	}
	pod := test.Pod("default", func(p *corev1.Pod) {
		p.Name, p.Spec.NodeName = "llm", "node-1"
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{term("a100"), term("a10g")}}}}
	})
	from := "pod default/llm runs on term 2 of 2 of its required node affinity (flavor a10g (2 of 2))"
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		gpu         string
		want        string
	}{
		{"opt-in: off by default", nil, "a10g", from + "; stays: returns to earlier terms only where its NodePool's capstan.dev/return-to-preferred is Enabled (they may cost more)"},
		// The method's verdict: this input has no snapshot to place the pod in.
		{"enabled", map[string]string{v1.ReturnToPreferredAnnotationKey: v1.ReturnToPreferredEnabled}, "a10g",
			from + "; returns when it can: not all pods would schedule, pod default/llm: no NodePool exists"},
		{"on its first term", map[string]string{v1.ReturnToPreferredAnnotationKey: v1.ReturnToPreferredEnabled}, "a100", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pool := np.DeepCopy()
			pool.Annotations = tc.annotations
			n := node.DeepCopy()
			n.Labels[v1.LabelInstanceGPUName] = tc.gpu
			in := &disruption.Input{NodePools: []*v1.NodePool{pool}, NodeClaims: []*v1.NodeClaim{nc}, Nodes: []*corev1.Node{n}, Pods: []*corev1.Pod{pod}}
			got := explain.ForNode(explain.NodeInput{NodeClaim: nc, Disruption: in, Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
			if got.Return != tc.want {
				t.Errorf("return %q, want %q", got.Return, tc.want)
			}
		})
	}
}
