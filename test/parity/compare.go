package parity

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
	"github.com/capstan-dev/capstan/test/invariants"
)

// Known is a difference between a cluster's outcome and simulate's that
// a scenario allows, with why; docs/simulate.md lists each.
type Known struct {
	// Why says what makes the two differ.
	Why string
	// normalise takes the difference out of an outcome.
	normalise func(Outcome) Outcome
	// settle is how much longer simulate runs than the cluster did, for
	// simulate to get where the cluster got sooner.
	settle time.Duration
}

// Settle runs simulate for d longer than the cluster ran: where the
// cluster acted sooner than simulate's clock must (a watch event woke a
// controller before its periodic requeue, which simulate waits for).
func Settle(d time.Duration, why string) Known {
	return Known{Why: why, settle: d}
}

// IgnoreZones compares nodes without their zones: where what picks a
// zone in the cluster depends on timing (which pods a batch held, which
// zone a pod spread to first).
func IgnoreZones(why string) Known {
	return Known{Why: why, normalise: Outcome.withoutZones}
}

// IgnoreDeletions compares the nodes left and the pods running only: where
// the path there is not simulate input (the scenario chose which pods a
// scale-down removed).
func IgnoreDeletions(why string) Known {
	return Known{Why: why, normalise: func(o Outcome) Outcome { o.Deletions = nil; return o }}
}

// IgnoreNodes compares the pods running only: where the nodes the
// cluster ends with depend on a path that is not simulate input, and a
// scenario compares what matters (cost, say) itself.
func IgnoreNodes(why string) Known {
	return Known{Why: why, normalise: func(o Outcome) Outcome { return Outcome{Running: o.Running} }}
}

// Diff is how simulated differs from cluster once known differences are
// taken out of both, "" when they agree.
func Diff(cluster, simulated Outcome, known ...Known) string {
	for _, k := range known {
		if k.normalise != nil {
			cluster, simulated = k.normalise(cluster), k.normalise(simulated)
		}
	}
	return cmp.Diff(cluster, simulated)
}

// Check fails t when simulated differs from cluster but for known
// differences, naming both outcomes; it logs both either way (the
// "PARITY" lines), and the known differences that applied.
func Check(t testing.TB, cluster, simulated Outcome, known ...Known) {
	t.Helper()
	if d := Diff(cluster, simulated, known...); d != "" {
		t.Errorf("PARITY %s: simulate differs from the cluster (-cluster +simulate):\n%s\ncluster:  %s\nsimulate: %s", t.Name(), d, cluster, simulated)
		return
	}
	note := ""
	differ := Diff(cluster, simulated) != ""
	for _, k := range known {
		if k.settle > 0 || differ {
			note += "; allowed: " + k.Why
		}
	}
	t.Logf("PARITY %s: agree%s\ncluster:  %s\nsimulate: %s", t.Name(), note, cluster, simulated)
}

// Scenario is an end-to-end scenario's parity check: its script, the
// controller's flags, its NodePool and where the simulated cloud keeps
// its state.
type Scenario struct {
	Script *Script
	// ControllerArgs are the flags the suite runs the controller with.
	ControllerArgs []string
	NodePool       string
	// StatePath is the simulated cloud's state file, which says when it
	// started: simulate's 0, from which the profile's events are timed.
	StatePath string
}

// ForCluster starts a scenario's script on a cluster whose simulated
// cloud keeps its state in statePath.
func ForCluster(t testing.TB, statePath string, controllerArgs []string, nodePool string) *Scenario {
	t.Helper()
	s, err := NewScript(clock.RealClock{})
	if err != nil {
		t.Fatalf("parity: %v", err)
	}
	return &Scenario{Script: s, ControllerArgs: controllerArgs, NodePool: nodePool, StatePath: statePath}
}

// settleTimeout bounds how long Check waits for the cluster to reach
// simulate's outcome: pods starting on nodes that registered, a drain
// finishing, kept short of a launch's worth of slack.
const settleTimeout = 30 * time.Second

// Check runs simulate on the scenario from the cloud's start to now (and
// for as long again as a Settle among known says) and compares its
// outcome with the cluster's, observe (Check), waiting up to
// settleTimeout for the cluster to get there: a scenario may end before
// its last pods run. On a difference it keeps the manifests and
// simulate's result in a directory it names, to run again with `capstan
// simulate`.
func (s *Scenario) Check(t testing.TB, observe func() Outcome, known ...Known) {
	t.Helper()
	state, err := sim.LoadState(s.StatePath)
	if err != nil {
		t.Errorf("PARITY %s: reading the simulated cloud's start, %v", t.Name(), err)
		return
	}
	dir, err := os.MkdirTemp("", "capstan-parity-")
	if err != nil {
		t.Errorf("PARITY %s: %v", t.Name(), err)
		return
	}
	duration := s.Script.Elapsed(state.Start)
	for _, k := range known {
		duration += k.settle
	}
	result, err := Simulate(context.Background(), s.Script, state.Start, s.ControllerArgs, duration, dir)
	if err != nil {
		t.Errorf("PARITY %s: %v (manifests in %s)", t.Name(), err, dir)
		return
	}
	simulated := FromResult(result, s.NodePool)
	cluster := observe()
	for deadline := time.Now().Add(settleTimeout); Diff(cluster, simulated, known...) != "" && time.Now().Before(deadline); {
		time.Sleep(time.Second)
		cluster = observe()
	}
	if Diff(cluster, simulated, known...) != "" {
		if data, err := json.MarshalIndent(result, "", "  "); err == nil {
			_ = os.WriteFile(filepath.Join(dir, "result.json"), data, 0o600)
		}
		t.Logf("PARITY %s: simulate ran for %s; its manifests and result are in %s", t.Name(), duration, dir)
	} else {
		_ = os.RemoveAll(dir)
	}
	Check(t, cluster, simulated, known...)
}

// Apply records objs as created or changed now (Script.Apply).
func (s *Scenario) Apply(t testing.TB, objs ...client.Object) {
	t.Helper()
	if err := s.Script.Apply(objs...); err != nil {
		t.Fatalf("parity: %v", err)
	}
}

// Delete records obj as deleted now (Script.Delete).
func (s *Scenario) Delete(t testing.TB, obj client.Object) {
	t.Helper()
	if err := s.Script.Delete(obj); err != nil {
		t.Fatalf("parity: %v", err)
	}
}

// Observe watches a scenario's namespace and NodePool with an invariants
// checker that holds them to nothing, for FromChecker: suites without a
// guard of their own. Call it before the scenario creates its pods.
func Observe(t testing.TB, cfg *rest.Config, scheme *runtime.Scheme, namespace, nodePool string) *invariants.Checker {
	t.Helper()
	c := invariants.New(invariants.Options{IgnorePDBStatus: true})
	c.Watch(t, cfg, scheme, namespace, nodePool)
	return c
}
