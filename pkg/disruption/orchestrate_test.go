package disruption

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

const (
	delay   = 15 * time.Second
	timeout = 20 * time.Minute
)

// options validate with both methods and name replacements
// "<nodepool>-r1", "<nodepool>-r2", ... in launch order.
func options() Options {
	n := 0
	return Options{Methods: Methods(Gates{Drift: true}), ValidationDelay: delay, ReplacementTimeout: timeout,
		Name: func(pool string) string { n++; return fmt.Sprintf("%s-r%d", pool, n) }}
}

// summary is each action as its kind and the nodes or NodeClaims it
// acts on.
func summary(as []Action) []string {
	out := []string{}
	for _, a := range as {
		s := []string{string(a.Kind)}
		s = append(s, names(a.Candidates)...)
		for _, nc := range a.NodeClaims {
			s = append(s, nc.Name)
		}
		out = append(out, strings.Join(s, " "))
	}
	return out
}

// checkAbandoned: want "" means not abandoned, else Abandoned must
// contain it.
func checkAbandoned(t *testing.T, got, want string) {
	t.Helper()
	if want == "" && got != "" || want != "" && !strings.Contains(got, want) {
		t.Errorf("abandoned %q, want %q", got, want)
	}
}

// orchestrated is a cluster of nodes a, b and c (4 cores each) whose
// nodes b and c run a 1-core pod each, so Emptiness picks a alone; setup
// may change that before the command is decided at t0.
func orchestrated(t *testing.T, setup func(*cluster)) (*cluster, Orchestration) {
	t.Helper()
	c := newCluster("a", "b", "c")
	for _, n := range []string{"a", "b", "c"} {
		c.capacity(n, "4")
	}
	c.pod("web-b", "b", requests("1"))
	c.pod("web-c", "c", requests("1"))
	setup(c)
	c.snapshot(m5...)
	d := Plan(c.in, Methods(Gates{Drift: true}), t0)
	if !d.Found {
		t.Fatalf("no command decided: %+v", d)
	}
	return c, Start(d.Command, t0)
}

// busyDrifted: a drifted with a 3-core pod, b and c too full to take it,
// so Drift replaces a.
func busyDrifted(c *cluster) {
	c.drift("a", t0)
	c.pod("web-a", "a", requests("3"))
	c.pod("more-b", "b", requests("2"))
	c.pod("more-c", "c", requests("2"))
}

func removePod(c *cluster, name string) {
	c.in.Pods = slices.DeleteFunc(c.in.Pods, func(p *corev1.Pod) bool { return p.Name == name })
}

func TestStepValidating(t *testing.T) {
	cases := []struct {
		name string
		// setup before the command is decided, change after; the snapshot
		// is rebuilt after change.
		setup, change func(*cluster)
		now           time.Time
		actions       []string
		done          bool
		abandoned     string
		wakeAt        time.Time
		phase         Phase
		replacements  []string
	}{
		{"before the delay: wait for it", func(*cluster) {}, func(*cluster) {}, t0.Add(10 * time.Second),
			[]string{}, false, "", t0.Add(delay), PhaseValidating, nil},
		{"after it, still empty: taint and delete", func(*cluster) {}, func(*cluster) {}, t0.Add(delay),
			[]string{"Taint a", "Delete a"}, true, "", time.Time{}, PhaseReplacing, nil},
		{"long after it too", func(*cluster) {}, func(*cluster) {}, t0.Add(time.Hour),
			[]string{"Taint a", "Delete a"}, true, "", time.Time{}, PhaseReplacing, nil},
		{"several empty nodes go together", func(c *cluster) { removePod(c, "web-c") }, func(*cluster) {}, t0.Add(delay),
			[]string{"Taint a c", "Delete a c"}, true, "", time.Time{}, PhaseReplacing, nil},
		{"a pod arrived on the candidate", func(*cluster) {}, func(c *cluster) {
			c.pod("new", "a")
			c.claim("a").Status.LastPodEventTime = metav1.NewTime(t0.Add(5 * time.Second))
		}, t0.Add(delay), []string{}, true, "nodeclaim nc-a", time.Time{}, PhaseValidating, nil},
		{"a pod arrived on one of several", func(c *cluster) { removePod(c, "web-c") }, func(c *cluster) {
			c.pod("new", "c")
		}, t0.Add(delay), []string{}, true, "nodeclaim nc-c no longer qualifies for Emptiness", time.Time{}, PhaseValidating, nil},
		{"the budget dropped to 0", func(*cluster) {}, func(c *cluster) {
			c.pool().Spec.Disruption.Budgets = []v1.Budget{{Nodes: "0"}}
		}, t0.Add(delay), []string{}, true, "nodeclaim nc-a: disruption budget of 0 for Empty", time.Time{}, PhaseValidating, nil},
		{"do-not-disrupt appeared on the node", func(*cluster) {}, func(c *cluster) {
			c.nodeNamed("a").Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: "true"}
		}, t0.Add(delay), []string{}, true, "nodeclaim nc-a: node a has do-not-disrupt", time.Time{}, PhaseValidating, nil},
		{"a pending pod is now headed for it", func(*cluster) {}, func(c *cluster) {
			c.pendingPod("waiting", requests("3.5"))
		}, t0.Add(delay), []string{}, true, "nodeclaim nc-a: node is nominated for a pending pod", time.Time{}, PhaseValidating, nil},
		{"the candidate is gone", func(*cluster) {}, func(c *cluster) {
			c.in.NodeClaims = slices.DeleteFunc(c.in.NodeClaims, func(nc *v1.NodeClaim) bool { return nc.Name == "nc-a" })
		}, t0.Add(delay), []string{}, true, "a candidate is gone", time.Time{}, PhaseValidating, nil},
		{"a drifted busy candidate: taint and launch its replacement", busyDrifted, func(*cluster) {}, t0.Add(delay),
			[]string{"Taint a", "Launch default-r1"}, false, "", t0.Add(delay + timeout), PhaseReplacing, []string{"default-r1"}},
		{"its pods now fit elsewhere: no replacement, taint and delete", busyDrifted, func(c *cluster) {
			removePod(c, "more-c")
		}, t0.Add(delay), []string{"Taint a", "Delete a"}, true, "", time.Time{}, PhaseReplacing, nil},
		{"no longer drifted", busyDrifted, func(c *cluster) {
			meta.RemoveStatusCondition(&c.claim("a").Status.Conditions, v1.ConditionTypeDrifted)
		}, t0.Add(delay), []string{}, true, "nodeclaim nc-a no longer qualifies for Drift", time.Time{}, PhaseValidating, nil},
		{"a PDB now refuses evictions", busyDrifted, func(c *cluster) { c.pdb("web-pdb", 0) }, t0.Add(delay),
			[]string{}, true, "nodeclaim nc-a: pdb default/web-pdb prevents pod evictions", time.Time{}, PhaseValidating, nil},
		{"its pods would no longer schedule", busyDrifted, func(c *cluster) {
			// b and c alone already hold 8 cores: nothing more may launch.
			c.pool().Spec.Limits = v1.Limits{corev1.ResourceCPU: resource.MustParse("4")}
		}, t0.Add(delay), []string{}, true, "nodeclaim nc-a: pod default/web-a would not schedule without the node", time.Time{}, PhaseValidating, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, o := orchestrated(t, tc.setup)
			tc.change(c)
			c.snapshot(m5...)
			res, err := options().Step(o, Observation{Input: c.in}, tc.now)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.actions, summary(res.Actions)); diff != "" {
				t.Errorf("actions (-want +got):\n%s", diff)
			}
			if res.Done != tc.done {
				t.Errorf("done %v, want %v", res.Done, tc.done)
			}
			checkAbandoned(t, res.Abandoned, tc.abandoned)
			if !res.WakeAt.Equal(tc.wakeAt) {
				t.Errorf("wake at %v, want %v", res.WakeAt, tc.wakeAt)
			}
			if res.Next.Phase != tc.phase {
				t.Errorf("next phase %s, want %s", res.Next.Phase, tc.phase)
			}
			if diff := cmp.Diff(tc.replacements, res.Next.Replacements); diff != "" {
				t.Errorf("replacements (-want +got):\n%s", diff)
			}
			if !res.Next.DecidedAt.Equal(t0) {
				t.Errorf("decided at %v, want t0", res.Next.DecidedAt)
			}
			if res.Next.Phase == PhaseReplacing && !res.Next.StartedAt.Equal(tc.now) {
				t.Errorf("started at %v, want now (%v)", res.Next.StartedAt, tc.now)
			}
		})
	}
}

// The NodeClaims launched for a command are rendered from their NodePool
// as the provisioner would: the name Options.Name gives, the NodePool
// label, its hash and hash version, requests for the pods they take.
func TestStepLaunchesReplacementsFromTheNodePool(t *testing.T) {
	c, o := orchestrated(t, busyDrifted)
	res, err := options().Step(o, Observation{Input: c.in}, t0.Add(delay))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Actions) != 2 || res.Actions[1].Kind != ActionLaunch || len(res.Actions[1].NodeClaims) != 1 {
		t.Fatalf("actions %v, want a taint and a launch of one NodeClaim", summary(res.Actions))
	}
	nc := res.Actions[1].NodeClaims[0]
	want := map[string]string{
		"name":     "default-r1",
		"nodepool": "default",
		"hash":     c.pool().Hash(),
		"version":  v1.NodePoolHashVersion,
	}
	got := map[string]string{
		"name":     nc.Name,
		"nodepool": nc.Labels[v1.NodePoolLabelKey],
		"hash":     nc.Annotations[v1.NodePoolHashAnnotationKey],
		"version":  nc.Annotations[v1.NodePoolHashVersionAnnotationKey],
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("launched NodeClaim (-want +got):\n%s", diff)
	}
	if cpu := nc.Spec.Resources.Requests.Cpu(); cpu.Cmp(resource.MustParse("3")) < 0 {
		t.Errorf("requests %v CPU, want at least web-a's 3", cpu)
	}
	if diff := cmp.Diff([]string{"a"}, names(res.Next.Command.Candidates)); diff != "" {
		t.Errorf("command's candidates (-want +got):\n%s", diff)
	}
	if len(res.Next.Command.Replacements) != 1 {
		t.Errorf("%d planned replacements kept, want 1", len(res.Next.Command.Replacements))
	}
}

func TestStepReplacing(t *testing.T) {
	started := t0.Add(delay)
	cases := []struct {
		name      string
		observed  map[string]ReplacementStatus
		now       time.Time
		actions   []string
		done      bool
		abandoned string
		wakeAt    time.Time
	}{
		{"still launching: wait until the timeout", map[string]ReplacementStatus{"r1": ReplacementLaunching, "r2": ReplacementLaunching},
			started.Add(time.Minute), []string{}, false, "", started.Add(timeout)},
		{"one up, one launching: wait", map[string]ReplacementStatus{"r1": ReplacementInitialized, "r2": ReplacementLaunching},
			started.Add(5 * time.Minute), []string{}, false, "", started.Add(timeout)},
		{"all initialized: delete the candidates", map[string]ReplacementStatus{"r1": ReplacementInitialized, "r2": ReplacementInitialized},
			started.Add(5 * time.Minute), []string{"Delete a"}, true, "", time.Time{}},
		{"all initialized just at the timeout: still delete", map[string]ReplacementStatus{"r1": ReplacementInitialized, "r2": ReplacementInitialized},
			started.Add(timeout), []string{"Delete a"}, true, "", time.Time{}},
		{"a replacement missing: untaint and abandon", map[string]ReplacementStatus{"r1": ReplacementInitialized},
			started.Add(time.Minute), []string{"Untaint a"}, true, "replacement nodeclaim r2 failed to launch or initialize", time.Time{}},
		{"nothing observed at all", nil,
			started.Add(time.Minute), []string{"Untaint a"}, true, "replacement nodeclaim r1 failed", time.Time{}},
		{"a replacement failed", map[string]ReplacementStatus{"r1": ReplacementFailed, "r2": ReplacementInitialized},
			started.Add(time.Minute), []string{"Untaint a"}, true, "replacement nodeclaim r1 failed", time.Time{}},
		{"past the timeout: untaint and abandon", map[string]ReplacementStatus{"r1": ReplacementInitialized, "r2": ReplacementLaunching},
			started.Add(timeout), []string{"Untaint a"}, true, "replacements did not initialize within 20m0s", time.Time{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster("a", "b")
			cmd := Command{Method: "Drift", Reason: v1.DisruptionReasonDrifted, Candidates: Candidates(c.in, t0)[:1]}
			o := Orchestration{Command: cmd, Phase: PhaseReplacing, DecidedAt: t0, StartedAt: started, Replacements: []string{"r1", "r2"}}
			res, err := options().Step(o, Observation{Input: c.in, Replacements: tc.observed}, tc.now)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.actions, summary(res.Actions)); diff != "" {
				t.Errorf("actions (-want +got):\n%s", diff)
			}
			if res.Done != tc.done {
				t.Errorf("done %v, want %v", res.Done, tc.done)
			}
			checkAbandoned(t, res.Abandoned, tc.abandoned)
			if !res.WakeAt.Equal(tc.wakeAt) {
				t.Errorf("wake at %v, want %v", res.WakeAt, tc.wakeAt)
			}
			if diff := cmp.Diff(o, res.Next, cmp.Comparer(func(a, b Candidate) bool { return a.NodeClaim == b.NodeClaim })); diff != "" {
				t.Errorf("replacing changed the orchestration (-want +got):\n%s", diff)
			}
		})
	}
}

// A method that is no longer enabled (the Drift gate turned off, say)
// abandons its command at validation; an unknown phase is an error.
func TestStepUnknown(t *testing.T) {
	c, o := orchestrated(t, busyDrifted)
	noDrift := options()
	noDrift.Methods = Methods(Gates{})
	res, err := noDrift.Step(o, Observation{Input: c.in}, t0.Add(delay))
	if err != nil || !res.Done || res.Abandoned != "method Drift is no longer enabled" || len(res.Actions) != 0 {
		t.Errorf("drift off: %+v %v, want abandoned, no actions", res, err)
	}
	o.Command.Method = "Consolidation"
	res, err = options().Step(o, Observation{Input: c.in}, t0.Add(delay))
	if err != nil || !res.Done || res.Abandoned != "method Consolidation is no longer enabled" || len(res.Actions) != 0 {
		t.Errorf("unknown method: %+v %v, want abandoned, no actions", res, err)
	}
	o.Phase = "Sleeping"
	if _, err := options().Step(o, Observation{Input: c.in}, t0.Add(delay)); err == nil {
		t.Error("an unknown phase was stepped")
	}
}

// Budgets that cannot be evaluated allow nothing: the command is
// abandoned with the budget's verdict, and no error stops the others.
func TestStepValidatingBadBudget(t *testing.T) {
	c, o := orchestrated(t, func(*cluster) {})
	c.pool().Spec.Disruption.Budgets = []v1.Budget{{Nodes: "many"}}
	res, err := options().Step(o, Observation{Input: c.in}, t0.Add(delay))
	if err != nil || !res.Done || len(res.Actions) != 0 || res.Abandoned != "nodeclaim nc-a: disruption budget of 0 for Empty" {
		t.Errorf("%+v %v, want abandoned for the budget, no actions", res, err)
	}
}

// One NodePool's bad time zone holds only its own nodes.
func TestBadBudgetHoldsItsNodePoolOnly(t *testing.T) {
	c := newCluster("a")
	bad := c.pool().DeepCopy()
	bad.Name, bad.Annotations = "bad", map[string]string{v1.BudgetTimeZoneAnnotationKey: "Mars/Olympus"}
	c.in.NodePools = append(c.in.NodePools, bad)
	allowed := AllowedByPool(c.in, v1.DisruptionReasonEmpty, t0)
	if allowed["bad"] != 0 || allowed["default"] != 1 {
		t.Errorf("allowed %v, want 0 for bad and 1 for default", allowed)
	}
	if d := Plan(c.in, Methods(Gates{Drift: true}), t0); !d.Found || names(d.Command.Candidates)[0] != "a" {
		t.Errorf("plan %+v, want node a of the good NodePool", d)
	}
}

// A drifted busy node, from decision to deletion: wait out the delay,
// taint and launch, wait for the replacement, delete.
func TestOrchestrationLifecycle(t *testing.T) {
	c, o := orchestrated(t, busyDrifted)
	opts := options()
	steps := []struct {
		at       time.Time
		observed map[string]ReplacementStatus
		actions  []string
		phase    Phase
		done     bool
	}{
		{t0.Add(5 * time.Second), nil, []string{}, PhaseValidating, false},
		{t0.Add(delay), nil, []string{"Taint a", "Launch default-r1"}, PhaseReplacing, false},
		{t0.Add(time.Minute), map[string]ReplacementStatus{"default-r1": ReplacementLaunching}, []string{}, PhaseReplacing, false},
		{t0.Add(3 * time.Minute), map[string]ReplacementStatus{"default-r1": ReplacementInitialized}, []string{"Delete a"}, PhaseReplacing, true},
	}
	for i, s := range steps {
		res, err := opts.Step(o, Observation{Input: c.in, Replacements: s.observed}, s.at)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if diff := cmp.Diff(s.actions, summary(res.Actions)); diff != "" {
			t.Errorf("step %d actions (-want +got):\n%s", i, diff)
		}
		if res.Next.Phase != s.phase || res.Done != s.done || res.Abandoned != "" {
			t.Errorf("step %d: phase %s done %v abandoned %q, want %s %v", i, res.Next.Phase, res.Done, res.Abandoned, s.phase, s.done)
		}
		o = res.Next
	}
}

func TestStaleTaints(t *testing.T) {
	disrupted := func(c *cluster, node string) {
		c.nodeNamed(node).Spec.Taints = append(c.nodeNamed(node).Spec.Taints, v1.DisruptedNoScheduleTaint())
	}
	cases := []struct {
		name   string
		setup  func(*cluster)
		active []string
		want   []string
	}{
		{"tainted, nothing accounts for it", func(c *cluster) { disrupted(c, "a") }, nil, []string{"a"}},
		{"several, in node order", func(c *cluster) {
			disrupted(c, "b")
			disrupted(c, "a")
		}, nil, []string{"a", "b"}},
		{"the taint with another value still is it", func(c *cluster) {
			c.nodeNamed("a").Spec.Taints = []corev1.Taint{{Key: v1.DisruptedTaintKey, Value: "x", Effect: corev1.TaintEffectNoSchedule}}
		}, nil, []string{"a"}},
		{"untainted", func(*cluster) {}, nil, []string{}},
		{"another taint", func(c *cluster) {
			c.nodeNamed("a").Spec.Taints = []corev1.Taint{{Key: "dedicated", Effect: corev1.TaintEffectNoSchedule}}
		}, nil, []string{}},
		{"the node being deleted", func(c *cluster) {
			disrupted(c, "a")
			c.nodeNamed("a").DeletionTimestamp = &metav1.Time{Time: t0}
		}, nil, []string{}},
		{"its NodeClaim being deleted", func(c *cluster) {
			disrupted(c, "a")
			c.claim("a").DeletionTimestamp = &metav1.Time{Time: t0}
		}, nil, []string{}},
		{"a candidate of the command in flight", func(c *cluster) {
			disrupted(c, "a")
			disrupted(c, "b")
		}, []string{"nc-a"}, []string{"b"}},
		{"a node no NodeClaim owns is not ours", func(c *cluster) {
			disrupted(c, "a")
			c.claim("a").Status.NodeName = "elsewhere"
		}, nil, []string{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster("a", "b")
			tc.setup(c)
			got := []string{}
			for _, n := range StaleTaints(c.in, tc.active) {
				got = append(got, n.Name)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("stale (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReplacementStatusOf(t *testing.T) {
	claim := func(mods ...func(*v1.NodeClaim)) *v1.NodeClaim {
		nc := &v1.NodeClaim{}
		for _, m := range mods {
			m(nc)
		}
		return nc
	}
	initialized := func(status metav1.ConditionStatus) func(*v1.NodeClaim) {
		return func(nc *v1.NodeClaim) {
			nc.Status.Conditions = append(nc.Status.Conditions, metav1.Condition{Type: v1.ConditionTypeInitialized, Status: status})
		}
	}
	deleting := func(nc *v1.NodeClaim) { nc.DeletionTimestamp = &metav1.Time{Time: t0} }
	for _, tc := range []struct {
		name string
		nc   *v1.NodeClaim
		want ReplacementStatus
	}{
		{name: "gone", want: ReplacementFailed},
		{name: "deleting", nc: claim(deleting), want: ReplacementFailed},
		{name: "deleting once initialized", nc: claim(deleting, initialized(metav1.ConditionTrue)), want: ReplacementFailed},
		{name: "launching", nc: claim(), want: ReplacementLaunching},
		{name: "not initialized yet", nc: claim(initialized(metav1.ConditionFalse)), want: ReplacementLaunching},
		{name: "initialized", nc: claim(initialized(metav1.ConditionTrue)), want: ReplacementInitialized},
	} {
		if got := ReplacementStatusOf(tc.nc); got != tc.want {
			t.Errorf("%s: got %d, want %d", tc.name, got, tc.want)
		}
	}
}
