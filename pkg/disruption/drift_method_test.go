package disruption

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/test"
)

// sameVerdicts compares verdicts; a wanted message ending in "*" need
// only be a prefix of the one got (the solver's own words follow it).
func sameVerdicts(t *testing.T, want, got []Verdict) {
	t.Helper()
	got = append([]Verdict{}, got...)
	for i := range got {
		if i < len(want) {
			if prefix, ok := strings.CutSuffix(want[i].Message, "*"); ok && strings.HasPrefix(got[i].Message, prefix) {
				got[i].Message = want[i].Message
			}
		}
	}
	// Codes are asserted by TestVerdictCodes; the messages say the same.
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty(), cmpopts.IgnoreFields(Verdict{}, "Code")); diff != "" {
		t.Errorf("verdicts (-want +got):\n%s", diff)
	}
}

func driftBlocked(node, msg string) Verdict {
	return Verdict{NodeClaim: "nc-" + node, Node: node, Method: "Drift", Event: EventDisruptionBlocked, Message: msg}
}

func unconsolidatable(node, msg string) Verdict {
	return Verdict{NodeClaim: "nc-" + node, Node: node, Method: "Emptiness", Event: EventUnconsolidatable, Message: msg}
}

func TestDrift(t *testing.T) {
	driftedOnly := func(b ...v1.Budget) func(*cluster) {
		return func(c *cluster) { c.pool().Spec.Disruption.Budgets = b }
	}
	cases := []replaceCase{
		{"only NodeClaims with Drifted=True", func(c *cluster) {
			c.drift("a", t0)
			c.claim("b").Status.Conditions = append(c.claim("b").Status.Conditions,
				metav1.Condition{Type: v1.ConditionTypeDrifted, Status: metav1.ConditionFalse, Reason: "NotDrifted"})
		}, []string{"a"}, [][]string{}, nil, 1},
		{"nothing drifted: no command", func(*cluster) {}, nil, [][]string{}, nil, 0},
		{"empty drifted nodes go together", func(c *cluster) {
			c.drift("a", t0)
			c.drift("b", t0)
			c.drift("c", t0)
			c.pod("logs", "b", daemon)
		}, []string{"a", "b", "c"}, [][]string{}, nil, 3},
		{"as many empty ones as the Drifted budget allows", func(c *cluster) {
			driftedOnly(v1.Budget{Nodes: "2", Reasons: []v1.DisruptionReason{v1.DisruptionReasonDrifted}})(c)
			c.drift("a", t0)
			c.drift("b", t0)
			c.drift("c", t0)
		}, []string{"a", "b"}, [][]string{}, nil, 3},
		{"under the budget, the longest drifted empty ones first", func(c *cluster) {
			driftedOnly(v1.Budget{Nodes: "2", Reasons: []v1.DisruptionReason{v1.DisruptionReasonDrifted}})(c)
			c.drift("a", t0.Add(10*time.Minute))
			c.drift("b", t0.Add(20*time.Minute))
			c.drift("c", t0.Add(5*time.Minute))
		}, []string{"c", "a"}, [][]string{}, nil, 3},
		{"an Empty budget does not hold drift", func(c *cluster) {
			driftedOnly(v1.Budget{Nodes: "0", Reasons: []v1.DisruptionReason{v1.DisruptionReasonEmpty}})(c)
			c.drift("a", t0)
			c.drift("b", t0)
		}, []string{"a", "b"}, [][]string{}, nil, 2},
		{"empty ones first, busy ones wait", func(c *cluster) {
			c.drift("a", t0)
			c.pod("web", "a", requests("1"))
			c.drift("b", t0)
		}, []string{"b"}, [][]string{}, nil, 2},
		{"a busy one whose pods fit on another node's free capacity: no replacement", func(c *cluster) {
			c.drift("a", t0)
			c.pod("web", "a", requests("2"))
		}, []string{"a"}, [][]string{}, nil, 1},
		// The reference (drift.go ComputeCommands, controller.go) starts
		// a command per busy node while the Drifted budget allows: busy
		// nodes go as many at once as the budget allows, their pods
		// solved together.
		{"busy ones as many as the Drifted budget allows, replacements when the others are full", func(c *cluster) {
			c.drift("a", t0)
			c.drift("b", t0)
			c.pod("web-a", "a", requests("3"))
			c.pod("web-b", "b", requests("3"))
			c.pod("fill", "c", requests("3"))
		}, []string{"a", "b"}, [][]string{{"default/web-a", "default/web-b"}}, nil, 2},
		{"a Drifted budget of one: busy ones one at a time", func(c *cluster) {
			driftedOnly(v1.Budget{Nodes: "1", Reasons: []v1.DisruptionReason{v1.DisruptionReasonDrifted}})(c)
			c.drift("a", t0)
			c.drift("b", t0)
			c.pod("web-a", "a", requests("3"))
			c.pod("web-b", "b", requests("3"))
			c.pod("fill", "c", requests("3"))
		}, []string{"a"}, [][]string{{"default/web-a"}}, nil, 2},
		{"busy ones onto the others' free room together", func(c *cluster) {
			c.drift("a", t0.Add(10*time.Minute))
			c.drift("b", t0.Add(5*time.Minute))
			c.pod("web-a", "a", requests("1"))
			c.pod("web-b", "b", requests("1"))
		}, []string{"b", "a"}, [][]string{}, nil, 2},
		{"the longest drifted goes first", func(c *cluster) {
			driftedOnly(v1.Budget{Nodes: "1", Reasons: []v1.DisruptionReason{v1.DisruptionReasonDrifted}})(c)
			c.drift("a", t0.Add(10*time.Minute))
			c.drift("b", t0.Add(5*time.Minute))
			c.pod("web-a", "a", requests("1"))
			c.pod("web-b", "b", requests("1"))
		}, []string{"b"}, [][]string{}, nil, 2},
		{"a node whose pods fit nowhere stays, the verdict names the pod", func(c *cluster) {
			c.drift("a", t0)
			c.drift("b", t0.Add(time.Minute))
			c.pod("huge", "a", requests("32"))
			c.pod("web", "b", requests("1"))
		}, []string{"b"}, [][]string{}, []Verdict{
			driftBlocked("a", "pod default/huge would not schedule without the node: nodepool default: no instance type has room*"),
		}, 2},
		{"only such nodes: no command", func(c *cluster) {
			c.drift("a", t0)
			c.pod("huge", "a", requests("32"))
		}, nil, [][]string{}, []Verdict{
			driftBlocked("a", "pod default/huge would not schedule without the node: *"),
		}, 1},
		// The template's annotations are in its hash (the reference's
		// NodeClaimTemplate.ToNodeClaim keeps them), so adding
		// do-not-disrupt to a live pool drifts its nodes: the annotation
		// itself holds them.
		{"do-not-disrupt added to the NodePool's template holds the drift it causes", func(c *cluster) {
			c.pool().Spec.Template.ObjectMeta.Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: "true"}
			c.drift("a", t0)
			c.pod("web", "a", requests("1"))
			c.drift("b", t0)
		}, nil, [][]string{}, []Verdict{
			driftBlocked("a", "nodepool template of default has do-not-disrupt"),
			driftBlocked("b", "nodepool template of default has do-not-disrupt"),
		}, 2},
		{"a do-not-disrupt pod blocks it", func(c *cluster) {
			c.drift("a", t0)
			c.pod("web", "a", doNotDisrupt)
		}, nil, [][]string{}, []Verdict{driftBlocked("a", "pod default/web has do-not-disrupt")}, 1},
		{"do-not-disrupt on an empty drifted node", func(c *cluster) {
			c.drift("a", t0)
			c.drift("b", t0)
			c.nodeNamed("a").Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: "true"}
		}, []string{"b"}, [][]string{}, []Verdict{driftBlocked("a", "node a has do-not-disrupt")}, 2},
		{"a PDB that allows no eviction blocks it", func(c *cluster) {
			c.drift("a", t0)
			c.pod("web", "a")
			c.pdb("web-pdb", 0)
		}, nil, [][]string{}, []Verdict{driftBlocked("a", "pdb default/web-pdb prevents pod evictions")}, 1},
		{"a budget of 0 for Drifted", func(c *cluster) {
			driftedOnly(v1.Budget{Nodes: "0", Reasons: []v1.DisruptionReason{v1.DisruptionReasonDrifted}}, v1.Budget{Nodes: "100%"})(c)
			c.drift("a", t0)
			c.drift("b", t0)
			c.pod("web", "b")
		}, nil, [][]string{}, []Verdict{
			driftBlocked("a", "disruption budget of 0 for Drifted"),
			driftBlocked("b", "disruption budget of 0 for Drifted"),
		}, 2},
		{"a NotReady node spends the only disruption", func(c *cluster) {
			driftedOnly(v1.Budget{Nodes: "1"})(c)
			c.drift("a", t0)
			c.nodeNamed("c").Status.Conditions = nil
		}, nil, [][]string{}, []Verdict{driftBlocked("a", "disruption budget of 0 for Drifted")}, 1},
		{"deleting and uninitialized nodes are on their way: no verdict", func(c *cluster) {
			c.drift("a", t0)
			c.drift("b", t0)
			c.claim("a").DeletionTimestamp = &metav1.Time{Time: t0}
			c.claim("b").Status.Conditions = c.claim("b").Status.Conditions[1:]
		}, nil, [][]string{}, nil, 1},
		{"a node a pending pod is headed for", func(c *cluster) {
			c.drift("a", t0)
			c.pod("fill-b", "b", requests("4"))
			c.pod("fill-c", "c", requests("4"))
			c.pendingPod("waiting", requests("1"))
		}, nil, [][]string{}, []Verdict{driftBlocked("a", "node is nominated for a pending pod")}, 1},
	}
	runReplaceCases(t, Drift{}, cases)
}

// With the gate off Drift does not run; on, it comes first, and the
// others only when it yields nothing.
func TestMethodsOrder(t *testing.T) {
	methodNames := func(ms []Method) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.Name())
		}
		return out
	}
	if diff := cmp.Diff([]string{"Drift", "ExpectedInterruption", "Emptiness", "MultiNodeConsolidation", "SingleNodeConsolidation", "ReturnToPreferred", "ReturnToPreferredTerm"}, methodNames(Methods(Gates{Drift: true}))); diff != "" {
		t.Errorf("methods with drift (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"ExpectedInterruption", "Emptiness", "MultiNodeConsolidation", "SingleNodeConsolidation", "ReturnToPreferred", "ReturnToPreferredTerm"}, methodNames(Methods(Gates{}))); diff != "" {
		t.Errorf("methods without drift (-want +got):\n%s", diff)
	}
	c := newCluster("a", "b")
	c.pod("web", "a")
	c.drift("a", t0)
	c.claim("a").Status.Conditions[1].Status = metav1.ConditionFalse
	c.snapshot(m5...)
	d := Plan(c.in, Methods(Gates{Drift: true}), t0)
	if !d.Found || d.Command.Method != "Emptiness" {
		t.Fatalf("command %+v %v, want Emptiness's", d.Command, d.Found)
	}
	if diff := cmp.Diff(map[string]int{"Drift": 0, "ExpectedInterruption": 0, "Emptiness": 1}, d.Eligible); diff != "" {
		t.Errorf("eligible (-want +got):\n%s", diff)
	}
}

func TestEmptinessVerdicts(t *testing.T) {
	cases := []struct {
		name string
		// Nodes a, b and c; c runs a pod. Only a has room (4 cores) for
		// pending pods. consolidateAfter is 0s unless setup says.
		setup    func(*cluster)
		now      time.Time
		want     []string
		verdicts []Verdict
		eligible int
	}{
		{"nothing in the way", func(*cluster) {}, t0, []string{"a", "b"}, nil, 2},
		{"a budget of 0 for Empty", func(c *cluster) {
			c.pool().Spec.Disruption.Budgets = []v1.Budget{{Nodes: "0", Reasons: []v1.DisruptionReason{v1.DisruptionReasonEmpty}}, {Nodes: "100%"}}
		}, t0, nil, []Verdict{
			unconsolidatable("a", "disruption budget of 0 for Empty"),
			unconsolidatable("b", "disruption budget of 0 for Empty"),
		}, 2},
		{"do-not-disrupt on an empty node", func(c *cluster) {
			c.nodeNamed("a").Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: "true"}
		}, t0, []string{"b"}, []Verdict{unconsolidatable("a", "node a has do-not-disrupt")}, 2},
		{"a do-not-disrupt daemonset pod", func(c *cluster) {
			c.pod("logs", "b", daemon, doNotDisrupt)
		}, t0, []string{"a"}, []Verdict{unconsolidatable("b", "pod default/logs has do-not-disrupt")}, 2},
		{"a busy node is no concern of emptiness, blocked or not", func(c *cluster) {
			c.pod("keep", "c", doNotDisrupt)
		}, t0, []string{"a", "b"}, nil, 2},
		{"being deleted: not eligible, no verdict", func(c *cluster) {
			c.nodeNamed("a").DeletionTimestamp = &metav1.Time{Time: t0}
		}, t0, []string{"b"}, nil, 1},
		{"not initialized: eligible, no verdict", func(c *cluster) {
			c.claim("a").Status.Conditions = nil
		}, t0, []string{"b"}, nil, 2},
		{"not empty for long enough: not eligible", func(c *cluster) {
			c.pool().Spec.Disruption.ConsolidateAfter = v1.MustParseNillableDuration("10m")
			c.claim("b").Status.LastPodEventTime = metav1.NewTime(t0.Add(5 * time.Minute))
		}, t0.Add(12 * time.Minute), []string{"a"}, nil, 1},
		{"a node a pending pod would be nominated to", func(c *cluster) {
			c.pendingPod("waiting", requests("1"))
		}, t0, []string{"b"}, []Verdict{unconsolidatable("a", "node is nominated for a pending pod")}, 2},
		{"a pending pod that fits no node nominates none", func(c *cluster) {
			c.pendingPod("waiting", requests("6"))
		}, t0, []string{"a", "b"}, nil, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster("a", "b", "c")
			c.capacity("a", "4")
			c.pod("web", "c")
			tc.setup(c)
			c.snapshot(m5...)
			d := Plan(c.in, []Method{Emptiness{}}, tc.now)
			var got []string
			if d.Found {
				got = names(d.Command.Candidates)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("disrupted (-want +got):\n%s", diff)
			}
			sameVerdicts(t, tc.verdicts, d.Verdicts)
			if d.Eligible["Emptiness"] != tc.eligible {
				t.Errorf("eligible %d, want %d", d.Eligible["Emptiness"], tc.eligible)
			}
		})
	}
}

func TestDriftCondition(t *testing.T) {
	in := func(key string, values ...string) v1.NodeSelectorRequirementWithMinValues {
		return v1.NodeSelectorRequirementWithMinValues{Key: key, Operator: corev1.NodeSelectorOpIn, Values: values}
	}
	created := func() (*v1.NodePool, *v1.NodeClaim) {
		np := test.NodePool(func(np *v1.NodePool) {
			np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{in(v1.LabelInstanceType, "m5.large")}
		})
		nc := test.NodeClaim(func(nc *v1.NodeClaim) {
			nc.Annotations = map[string]string{v1.NodePoolHashAnnotationKey: np.Hash(), v1.NodePoolHashVersionAnnotationKey: v1.NodePoolHashVersion}
			nc.Labels = map[string]string{v1.NodePoolLabelKey: np.Name, v1.LabelInstanceType: "m5.large"}
		})
		return np, nc
	}
	taint := func(np *v1.NodePool, _ *v1.NodeClaim) {
		np.Spec.Template.Spec.Taints = []corev1.Taint{{Key: "dedicated", Effect: corev1.TaintEffectNoSchedule}}
	}
	cases := []struct {
		name  string
		edit  func(*v1.NodePool, *v1.NodeClaim)
		cloud string
		gate  bool
		// want is the condition's reason, "" for none.
		want string
	}{
		{"the gate off: never drifted", taint, "", false, ""},
		{"the gate off, the cloud's reason too", func(*v1.NodePool, *v1.NodeClaim) {}, "AMIDrift", false, ""},
		{"unchanged", func(*v1.NodePool, *v1.NodeClaim) {}, "", true, ""},
		{"the template's hash changed", taint, "", true, DriftNodePool},
		{"a requirement the node no longer satisfies", func(np *v1.NodePool, _ *v1.NodeClaim) {
			np.Spec.Template.Spec.Requirements[0] = in(v1.LabelInstanceType, "m5.xlarge")
		}, "", true, DriftRequirements},
		{"a widened requirement still satisfied", func(np *v1.NodePool, _ *v1.NodeClaim) {
			np.Spec.Template.Spec.Requirements[0] = in(v1.LabelInstanceType, "m5.large", "m5.2xlarge")
		}, "", true, ""},
		{"the cloud's reason when the NodePool does not drift", func(*v1.NodePool, *v1.NodeClaim) {}, "AMIDrift", true, "AMIDrift"},
		{"the NodePool's reason before the cloud's", taint, "AMIDrift", true, DriftNodePool},
		{"do-not-disrupt added to the template", func(np *v1.NodePool, _ *v1.NodeClaim) {
			np.Spec.Template.ObjectMeta.Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: "true"}
		}, "", true, DriftNodePool},
		{"behavioural fields: weight, limits, disruption", func(np *v1.NodePool, _ *v1.NodeClaim) {
			np.Spec.Weight = ptr.To[int32](10)
			np.Spec.Limits = v1.Limits{corev1.ResourceCPU: resource.MustParse("100")}
			np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "0"}}
			np.Spec.Disruption.ConsolidationPolicy = v1.ConsolidationPolicyWhenEmpty
			np.Spec.Disruption.ConsolidateAfter = v1.MustParseNillableDuration("1h")
		}, "", true, ""},
	}
	now := t0.Add(time.Hour)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			np, nc := created()
			tc.edit(np, nc)
			cond := DriftCondition(nc, np, tc.cloud, tc.gate, now)
			if tc.want == "" {
				if cond != nil {
					t.Fatalf("condition %+v, want none", cond)
				}
				return
			}
			if cond == nil {
				t.Fatalf("no condition, want one with reason %s", tc.want)
			}
			if cond.Type != v1.ConditionTypeDrifted || cond.Status != metav1.ConditionTrue || cond.Reason != tc.want {
				t.Errorf("condition %s=%s reason %s, want Drifted=True reason %s", cond.Type, cond.Status, cond.Reason, tc.want)
			}
			if cond.Message == "" {
				t.Error("the condition has no message")
			}
			if !cond.LastTransitionTime.Time.Equal(now) {
				t.Errorf("last transition %v, want now (%v)", cond.LastTransitionTime, now)
			}
		})
	}
}

// Drift orders its own copy: the candidates Plan hands every method keep
// their name order.
func TestDriftLeavesTheCandidatesOrder(t *testing.T) {
	c := newCluster("a", "b")
	c.drift("a", t0.Add(time.Minute))
	c.drift("b", t0)
	cs := Candidates(c.in, t0)
	out := Drift{}.Compute(Env{Candidates: cs, Allowed: map[string]int{"default": 2}, Now: t0})
	if diff := cmp.Diff([]string{"b", "a"}, names(out.Command.Candidates)); diff != "" {
		t.Errorf("disrupted (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a", "b"}, names(cs)); diff != "" {
		t.Errorf("candidates reordered (-want +got):\n%s", diff)
	}
}

// expectInterruption marks node's NodeClaim InterruptionExpected since
// the given time, as the interruption controller does for kind (once a
// node: it appends).
func (c *cluster) expectInterruption(node string, kind string, since time.Time) {
	nc := c.claim(node)
	nc.Status.Conditions = append(nc.Status.Conditions, metav1.Condition{
		Type: v1.ConditionTypeInterruptionExpected, Status: metav1.ConditionTrue, Reason: kind, LastTransitionTime: metav1.NewTime(since),
	})
}

func expectedBlocked(node, msg string) Verdict {
	return Verdict{NodeClaim: "nc-" + node, Node: node, Method: "ExpectedInterruption", Event: EventDisruptionBlocked, Message: msg}
}

// ExpectedInterruption replaces nodes the cloud will take away later
// (InterruptionExpected=True) as Drift replaces drifted ones: empty ones
// together, busy ones one at a time with replacements for the pods that
// fit nowhere else, the longest marked first, under the Drifted budget,
// do-not-disrupt and PDBs. Nodes without the condition (drifted ones
// included) are not its candidates.
func TestExpectedInterruption(t *testing.T) {
	const preemptible, rebalance = "PreemptibleMaxLifetime", "RebalanceRecommendation"
	budgets := func(b ...v1.Budget) func(*cluster) {
		return func(c *cluster) { c.pool().Spec.Disruption.Budgets = b }
	}
	cases := []replaceCase{
		// Candidates: the condition True, whichever notice set it.
		{"only NodeClaims with InterruptionExpected=True", func(c *cluster) {
			c.expectInterruption("a", preemptible, t0)
			c.claim("b").Status.Conditions = append(c.claim("b").Status.Conditions,
				metav1.Condition{Type: v1.ConditionTypeInterruptionExpected, Status: metav1.ConditionFalse, Reason: preemptible})
		}, []string{"a"}, [][]string{}, nil, 1},
		{"nothing expected: no command", func(*cluster) {}, nil, [][]string{}, nil, 0},
		{"a drifted node is Drift's, not this method's", func(c *cluster) {
			c.drift("a", t0)
			c.pod("web", "a", requests("3"))
		}, nil, [][]string{}, nil, 0},
		{"a rebalance recommendation the NodePool opted into", func(c *cluster) {
			c.expectInterruption("b", rebalance, t0)
		}, []string{"b"}, [][]string{}, nil, 1},
		// Replacing: empty ones first and together, busy ones one at a
		// time, a replacement only for pods that fit nowhere else.
		{"empty expected nodes go together", func(c *cluster) {
			c.expectInterruption("a", preemptible, t0)
			c.expectInterruption("b", rebalance, t0)
			c.pod("logs", "b", daemon)
		}, []string{"a", "b"}, [][]string{}, nil, 2},
		{"a busy one whose pods fit elsewhere: no replacement", func(c *cluster) {
			c.expectInterruption("a", preemptible, t0)
			c.pod("web", "a", requests("2"))
		}, []string{"a"}, [][]string{}, nil, 1},
		{"a busy one whose pods fit nowhere else: replaced", func(c *cluster) {
			c.expectInterruption("a", preemptible, t0)
			c.pod("web-a", "a", requests("3"))
			c.pod("fill-b", "b", requests("3"))
			c.pod("fill-c", "c", requests("3"))
		}, []string{"a"}, [][]string{{"default/web-a"}}, nil, 1},
		{"busy ones as many as the Drifted budget allows", func(c *cluster) {
			c.expectInterruption("a", preemptible, t0.Add(10*time.Minute))
			c.expectInterruption("b", preemptible, t0.Add(5*time.Minute))
			c.pod("web-a", "a", requests("3"))
			c.pod("web-b", "b", requests("3"))
			c.pod("fill", "c", requests("3"))
		}, []string{"b", "a"}, [][]string{{"default/web-a", "default/web-b"}}, nil, 2},
		{"a Drifted budget of one: busy ones one at a time, the longest expected first", func(c *cluster) {
			budgets(v1.Budget{Nodes: "1", Reasons: []v1.DisruptionReason{v1.DisruptionReasonDrifted}})(c)
			c.expectInterruption("a", preemptible, t0.Add(10*time.Minute))
			c.expectInterruption("b", preemptible, t0.Add(5*time.Minute))
			c.pod("web-a", "a", requests("3"))
			c.pod("web-b", "b", requests("3"))
			c.pod("fill", "c", requests("3"))
		}, []string{"b"}, [][]string{{"default/web-b"}}, nil, 2},
		{"empty ones first, busy ones wait", func(c *cluster) {
			c.expectInterruption("a", preemptible, t0)
			c.pod("web", "a", requests("1"))
			c.expectInterruption("b", preemptible, t0.Add(time.Minute))
		}, []string{"b"}, [][]string{}, nil, 2},
		// What holds it: do-not-disrupt, PDBs, the Drifted budget (and
		// not the Empty one), a pod that fits nowhere.
		{"a do-not-disrupt pod blocks it", func(c *cluster) {
			c.expectInterruption("a", preemptible, t0)
			c.pod("web", "a", doNotDisrupt)
		}, nil, [][]string{}, []Verdict{expectedBlocked("a", "pod default/web has do-not-disrupt")}, 1},
		{"do-not-disrupt on one node, the other goes", func(c *cluster) {
			c.expectInterruption("a", preemptible, t0)
			c.expectInterruption("b", preemptible, t0)
			c.nodeNamed("a").Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: "true"}
		}, []string{"b"}, [][]string{}, []Verdict{expectedBlocked("a", "node a has do-not-disrupt")}, 2},
		{"a PDB that allows no eviction blocks it", func(c *cluster) {
			c.expectInterruption("a", preemptible, t0)
			c.pod("web", "a")
			c.pdb("web-pdb", 0)
		}, nil, [][]string{}, []Verdict{expectedBlocked("a", "pdb default/web-pdb prevents pod evictions")}, 1},
		{"a budget of 0 for Drifted holds it", func(c *cluster) {
			budgets(v1.Budget{Nodes: "0", Reasons: []v1.DisruptionReason{v1.DisruptionReasonDrifted}}, v1.Budget{Nodes: "100%"})(c)
			c.expectInterruption("a", preemptible, t0)
			c.expectInterruption("b", rebalance, t0)
			c.pod("web", "b")
		}, nil, [][]string{}, []Verdict{
			expectedBlocked("a", "disruption budget of 0 for Drifted"),
			expectedBlocked("b", "disruption budget of 0 for Drifted"),
		}, 2},
		{"as many empty ones as the Drifted budget allows, the longest expected first", func(c *cluster) {
			budgets(v1.Budget{Nodes: "1", Reasons: []v1.DisruptionReason{v1.DisruptionReasonDrifted}})(c)
			c.expectInterruption("a", preemptible, t0.Add(time.Minute))
			c.expectInterruption("b", preemptible, t0)
		}, []string{"b"}, [][]string{}, nil, 2},
		{"a budget of 0 for Empty does not hold it", func(c *cluster) {
			budgets(v1.Budget{Nodes: "0", Reasons: []v1.DisruptionReason{v1.DisruptionReasonEmpty}})(c)
			c.expectInterruption("a", preemptible, t0)
		}, []string{"a"}, [][]string{}, nil, 1},
		{"a pod that fits nowhere keeps it, the verdict names the pod", func(c *cluster) {
			c.expectInterruption("a", preemptible, t0)
			c.pod("huge", "a", requests("32"))
		}, nil, [][]string{}, []Verdict{
			expectedBlocked("a", "pod default/huge would not schedule without the node: *"),
		}, 1},
		{"a deleting node is on its way: no verdict", func(c *cluster) {
			c.expectInterruption("a", preemptible, t0)
			c.claim("a").DeletionTimestamp = &metav1.Time{Time: t0}
		}, nil, [][]string{}, nil, 0},
	}
	runReplaceCases(t, ExpectedInterruption{}, cases)
}

// ExpectedInterruption needs no gate: with Drift off it still runs, and
// ahead of consolidation (which would otherwise take the empty node c).
func TestExpectedInterruptionWithoutTheDriftGate(t *testing.T) {
	c := newCluster("a", "b", "c")
	for _, n := range []string{"a", "b", "c"} {
		c.capacity(n, "4")
	}
	c.expectInterruption("a", "PreemptibleMaxLifetime", t0)
	c.pod("web-a", "a", requests("1"))
	c.pod("web-b", "b", requests("1"))
	c.snapshot(m5...)
	d := Plan(c.in, Methods(Gates{}), t0.Add(time.Hour))
	if !d.Found || d.Command.Method != "ExpectedInterruption" {
		t.Fatalf("command %s %v (found %v), want ExpectedInterruption's", d.Command.Method, names(d.Command.Candidates), d.Found)
	}
	if diff := cmp.Diff([]string{"a"}, names(d.Command.Candidates)); diff != "" {
		t.Errorf("disrupted (-want +got):\n%s", diff)
	}
}

// replaceCase is a table row for the methods that replace marked nodes
// (Drift, ExpectedInterruption).
type replaceCase struct {
	name string
	// Nodes a, b and c, 4 cores each, NodePool "default" offering m5
	// with a budget of 100%; the snapshot is built after setup.
	setup func(*cluster)
	want  []string
	// replacements are the pods of each replacement NodeClaim.
	replacements [][]string
	verdicts     []Verdict
	eligible     int
}

// runReplaceCases plans with m alone an hour after t0 for each case.
func runReplaceCases(t *testing.T, m Method, cases []replaceCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster("a", "b", "c")
			for _, n := range []string{"a", "b", "c"} {
				c.capacity(n, "4")
			}
			tc.setup(c)
			c.snapshot(m5...)
			d := Plan(c.in, []Method{m}, t0.Add(time.Hour))
			if d.Found != (len(tc.want) > 0) {
				t.Fatalf("command %v (%v), want one for %v", d.Found, names(d.Command.Candidates), tc.want)
			}
			if d.Found {
				if d.Command.Method != m.Name() || d.Command.Reason != v1.DisruptionReasonDrifted {
					t.Errorf("method %s reason %s, want %s and Drifted", d.Command.Method, d.Command.Reason, m.Name())
				}
				if diff := cmp.Diff(tc.want, names(d.Command.Candidates)); diff != "" {
					t.Errorf("disrupted (-want +got):\n%s", diff)
				}
			}
			if diff := cmp.Diff(tc.replacements, replacementPods(Simulation{Replacements: d.Command.Replacements})); diff != "" {
				t.Errorf("replacements' pods (-want +got):\n%s", diff)
			}
			for _, r := range d.Command.Replacements {
				if r.NodePool != "default" || len(r.InstanceTypes) == 0 {
					t.Errorf("replacement of nodepool %q with %d instance types", r.NodePool, len(r.InstanceTypes))
				}
			}
			sameVerdicts(t, tc.verdicts, d.Verdicts)
			if d.Eligible[m.Name()] != tc.eligible {
				t.Errorf("eligible %d, want %d", d.Eligible[m.Name()], tc.eligible)
			}
		})
	}
}
