package invariants

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/watch"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// step is one change a test feeds the checker.
type step struct {
	typ watch.EventType
	nc  *v1.NodeClaim
}

func added(nc *v1.NodeClaim) step    { return step{watch.Added, nc} }
func modified(nc *v1.NodeClaim) step { return step{watch.Modified, nc} }
func deleted(nc *v1.NodeClaim) step  { return step{watch.Deleted, nc} }

// NodeClaims deleting at once are counted by their disruption reason
// against that reason's budget; forceful reasons, reasons the budgets do
// not name and deletions without a reason are not limited.
func TestBudgetsPerReason(t *testing.T) {
	t.Parallel()
	empty, drifted := disrupted(v1.DisruptionReasonEmpty), disrupted(v1.DisruptionReasonDrifted)
	interrupted := disrupted(v1.DisruptionReasonInterrupted)
	voluntary := map[v1.DisruptionReason]int{v1.DisruptionReasonEmpty: 1, v1.DisruptionReasonUnderutilized: 1, v1.DisruptionReasonDrifted: 1}
	live := []step{added(claim("a")), added(claim("b")), added(claim("c"))}
	for _, tc := range []struct {
		name    string
		budgets map[v1.DisruptionReason]int
		steps   []step
		// violations, each naming objects; the peaks.
		violations    int
		objects       []string
		peak, peakVol int
	}{
		{name: "one at a time", budgets: voluntary, steps: []step{
			modified(claim("a", drifted)), modified(claim("a", drifted, deleting)), deleted(claim("a", drifted, deleting)),
			modified(claim("b", drifted, deleting)),
		}, peak: 1, peakVol: 1},
		{name: "two drifted at once", budgets: voluntary, steps: []step{
			modified(claim("a", drifted, deleting)), modified(claim("b", drifted, deleting)), modified(claim("c", drifted, deleting)),
		}, violations: 1, objects: []string{"a (", "b (", "for Drifted, the budget allows 1"}, peak: 3, peakVol: 3},
		{name: "the reason set after the deletion", budgets: voluntary, steps: []step{
			modified(claim("a", deleting)), modified(claim("b", deleting)), modified(claim("b", drifted, deleting)), modified(claim("a", drifted, deleting)),
		}, violations: 1, objects: []string{"a (", "b ("}, peak: 2, peakVol: 2},
		{name: "each reason its own budget", budgets: voluntary, steps: []step{
			modified(claim("a", empty, deleting)), modified(claim("b", drifted, deleting)),
		}, peak: 2, peakVol: 2},
		{name: "interruption is not budgeted", budgets: voluntary, steps: []step{
			modified(claim("a", interrupted, deleting)), modified(claim("b", interrupted, deleting)), modified(claim("c", drifted, deleting)),
		}, peak: 3, peakVol: 1},
		{name: "a reason the budgets do not name", budgets: map[v1.DisruptionReason]int{v1.DisruptionReasonEmpty: 1}, steps: []step{
			modified(claim("a", drifted, deleting)), modified(claim("b", drifted, deleting)),
		}, peak: 2, peakVol: 2},
		{name: "deletions without a reason", budgets: voluntary, steps: []step{
			modified(claim("a", deleting)), modified(claim("b", deleting)),
		}, peak: 2},
		{name: "a budget of 0", budgets: map[v1.DisruptionReason]int{v1.DisruptionReasonEmpty: 0}, steps: []step{
			modified(claim("a", empty)), modified(claim("a", empty, deleting)),
		}, violations: 1, objects: []string{"a (", "disrupted for Empty"}, peak: 1, peakVol: 1},
		{name: "a breach reported once, another after it ended", budgets: voluntary, steps: []step{
			modified(claim("a", empty, deleting)), modified(claim("b", empty, deleting)), modified(claim("c", empty, deleting)),
			deleted(claim("a", empty, deleting)), deleted(claim("b", empty, deleting)),
			added(claim("d", empty, deleting)),
		}, violations: 2, objects: []string{"for Empty"}, peak: 3, peakVol: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := New(Options{Budgets: tc.budgets})
			for i, s := range slices.Concat(live, tc.steps) {
				c.ObserveClaim(s.typ, s.nc, at(float64(i)))
			}
			expectViolations(t, c, tc.violations, tc.objects...)
			if c.Peak() != tc.peak || c.PeakVoluntary() != tc.peakVol {
				t.Errorf("peak %d, voluntary %d; want %d, %d", c.Peak(), c.PeakVoluntary(), tc.peak, tc.peakVol)
			}
		})
	}
}

// Live NodeClaims in a reservation never exceed its slots; deleting ones
// have given theirs up, and reservations without a bound are not checked.
func TestReservationSlots(t *testing.T) {
	t.Parallel()
	cr := inReservation("cr-a")
	for _, tc := range []struct {
		name       string
		steps      []step
		violations int
		objects    []string
	}{
		{name: "a slot freed, then taken", steps: []step{
			added(claim("a", cr)), modified(claim("a", cr, deleting)), added(claim("b", cr)), deleted(claim("a", cr, deleting)),
		}},
		{name: "relabelled out of an ended reservation", steps: []step{
			added(claim("a", cr)), modified(claim("a")), added(claim("b", cr)),
		}},
		{name: "another reservation", steps: []step{
			added(claim("a", cr)), added(claim("b", inReservation("cr-b"))), added(claim("c", inReservation("cr-b"))),
		}},
		{name: "two in one slot", steps: []step{
			added(claim("a", cr)), added(claim("b")), modified(claim("b", cr)), added(claim("c", cr)),
		}, violations: 1, objects: []string{"reservation cr-a of 1 slots", "a (", "b ("}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := New(Options{Reservations: map[string]int{"cr-a": 1}})
			for i, s := range tc.steps {
				c.ObserveClaim(s.typ, s.nc, at(float64(i)))
			}
			expectViolations(t, c, tc.violations, tc.objects...)
		})
	}
}
