package provisioning_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/provisioning/checker"
)

// Deterministic quality on the reference workload: every pod placed, the
// result sound, and the price within 15% of the fractional lower bound
// (the reference implementation is at about 1.6×).
func TestReferenceWorkloadQuality(t *testing.T) {
	for _, n := range []int{1000, 5000} {
		in := referenceWorkload(n, 1)
		r := provisioning.Solve(in)
		if len(r.Unplaced) != 0 {
			t.Fatalf("%d pods: %d unplaced, first %s: %s", n, len(r.Unplaced), r.Unplaced[0].Reason, r.Unplaced[0].Message)
		}
		if err := checker.Check(in, r); err != nil {
			t.Fatalf("%d pods: %v", n, err)
		}
		bound := provisioning.LowerBound(in.Pods, in.InstanceTypes["default"])
		if got := cost(r); got > 1.15*bound {
			t.Errorf("%d pods cost %.1f/h, more than 1.15 × the lower bound %.1f/h", n, got, bound)
		}
		// The hostname anti-affinity group alone needs one node per pod.
		if len(r.NewNodeClaims) != n/5 {
			t.Errorf("%d pods: %d nodes, want %d", n, len(r.NewNodeClaims), n/5)
		}
	}
}

// Preferences are honoured when they can be: one pod per node, all in the
// preferred zone-1; the unsatisfiable zone anti-affinity is given up.
func TestPreferencesWorkload(t *testing.T) {
	in := preferencesWorkload(500, 1)
	r := provisioning.Solve(in)
	if err := checker.Check(in, r); err != nil {
		t.Fatal(err)
	}
	if len(r.NewNodeClaims) != 500 {
		t.Errorf("%d nodes, want one per pod", len(r.NewNodeClaims))
	}
	if z := zonesOf(r); z["zone-1"] < 498 {
		t.Errorf("zones %v: want nearly all in the preferred zone-1", z)
	}
}

// A one-slot reservation against anti-affine pods: exactly one reserved
// node, never more.
func TestReservationWorkload(t *testing.T) {
	in := reservationWorkload(300, 1)
	r := provisioning.Solve(in)
	if err := checker.Check(in, r); err != nil {
		t.Fatal(err)
	}
	if got := countClaims(r)["reserved:cr-bench"]; got != 1 {
		t.Errorf("%d reserved claims, want 1", got)
	}
	if len(r.Unplaced) != 0 {
		t.Errorf("%d unplaced", len(r.Unplaced))
	}
}

// The hot path does not allocate: fit, requirement and offering checks.
func TestHotPathAllocations(t *testing.T) {
	in := referenceWorkload(10, 1)
	its := in.InstanceTypes["default"]
	r := provisioning.Solve(in)
	reqs := r.NewNodeClaims[0].Requirements
	o := its[10].Offerings[0]
	if n := testing.AllocsPerRun(100, func() { _ = its[10].Requirements.Intersects(reqs) }); n != 0 {
		t.Errorf("Requirements.Intersects allocates %v times", n)
	}
	if n := testing.AllocsPerRun(100, func() { _ = o.CompatibleWith(reqs) }); n != 0 {
		t.Errorf("Offering.CompatibleWith allocates %v times", n)
	}
}

// Allocations per pod on the whole solve stay bounded, so memory grows
// linearly with the workload.
func TestSolveAllocationsPerPod(t *testing.T) {
	in := referenceWorkload(1000, 1)
	allocs := testing.AllocsPerRun(2, func() { provisioning.Solve(in) })
	if perPod := allocs / 1000; perPod > 80 {
		t.Errorf("%.0f allocations per pod, ceiling 80", perPod)
	}
}

// A solve is the same however many goroutines read the pods' specs.
func TestSolveIsDeterministicAcrossWorkers(t *testing.T) {
	if testing.Short() {
		t.Skip("solves 3,000 pods four times")
	}
	in := referenceWorkload(3000, 3)
	in.Options.Workers = 1
	want := rendered(provisioning.Solve(in))
	for _, workers := range []int{2, 3, 8} {
		in.Options.Workers = workers
		if diff := cmp.Diff(want, rendered(provisioning.Solve(in))); diff != "" {
			t.Fatalf("%d workers differ from one (-one +%d):\n%s", workers, workers, diff)
		}
	}
}

// rendered is a result as text, claim by claim in order: requirements,
// options, capacity type and pods.
func rendered(r provisioning.Result) []string {
	var out []string
	for _, nc := range r.NewNodeClaims {
		line := fmt.Sprintf("%s %s %s %s", nc.NodePool, nc.Requirements, nc.CapacityType, nc.ReservationID)
		for _, it := range nc.InstanceTypes {
			line += " " + it.Name
		}
		for _, p := range nc.Pods {
			line += " " + p.Name
		}
		out = append(out, line)
	}
	for _, n := range r.Nominations {
		out = append(out, n.Pod.Name+" → "+n.NodeName)
	}
	for _, u := range r.Unplaced {
		out = append(out, fmt.Sprintf("%s unplaced: %s %s", u.Pod.Name, u.Reason, u.Message))
	}
	return out
}
