package disruption

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/test"
)

// seedNodePool is seed 004's three-budget NodePool: 20% for Empty and
// Drifted, a ceiling of 5, and none Underutilized in the first 10
// minutes of the day.
func seedNodePool(tz string) *v1.NodePool {
	return test.NodePool(func(np *v1.NodePool) {
		if tz != "" {
			np.Annotations = map[string]string{v1.BudgetTimeZoneAnnotationKey: tz}
		}
		np.Spec.Disruption.Budgets = []v1.Budget{
			{Nodes: "20%", Reasons: []v1.DisruptionReason{v1.DisruptionReasonEmpty, v1.DisruptionReasonDrifted}},
			{Nodes: "5"},
			{Nodes: "0", Schedule: ptr.To("@daily"), Duration: &metav1.Duration{Duration: 10 * time.Minute}, Reasons: []v1.DisruptionReason{v1.DisruptionReasonUnderutilized}},
		}
	})
}

func TestAllowed(t *testing.T) {
	noon := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	pastMidnight := time.Date(2026, 3, 10, 0, 5, 0, 0, time.UTC)
	cases := []struct {
		name              string
		np                *v1.NodePool
		reason            v1.DisruptionReason
		total, disrupting int
		now               time.Time
		want              int
	}{
		{"seed: 19 nodes, 20% rounds 3.8 up to 4", seedNodePool(""), v1.DisruptionReasonEmpty, 19, 0, noon, 4},
		{"seed: Drifted shares the 20%", seedNodePool(""), v1.DisruptionReasonDrifted, 19, 0, noon, 4},
		{"seed: 30 nodes, the ceiling of 5", seedNodePool(""), v1.DisruptionReasonEmpty, 30, 0, noon, 5},
		{"seed: Underutilized is held by the ceiling alone", seedNodePool(""), v1.DisruptionReasonUnderutilized, 19, 0, noon, 5},
		{"seed: no Underutilized in the first 10 minutes of the day", seedNodePool(""), v1.DisruptionReasonUnderutilized, 19, 0, pastMidnight, 0},
		{"seed: Empty still allowed then", seedNodePool(""), v1.DisruptionReasonEmpty, 19, 0, pastMidnight, 4},
		{"deleting and NotReady nodes count against it", seedNodePool(""), v1.DisruptionReasonEmpty, 19, 3, noon, 1},
		{"never below 0", seedNodePool(""), v1.DisruptionReasonEmpty, 19, 9, noon, 0},
		{"the default 10% of 3 nodes is 1", test.NodePool(func(np *v1.NodePool) { np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "10%"}} }), v1.DisruptionReasonEmpty, 3, 0, noon, 1},
		{"nodes: 0 stops everything", test.NodePool(func(np *v1.NodePool) { np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "0"}} }), v1.DisruptionReasonDrifted, 10, 0, noon, 0},
		{"no budget: every node", test.NodePool(func(np *v1.NodePool) { np.Spec.Disruption.Budgets = nil }), v1.DisruptionReasonEmpty, 7, 2, noon, 5},
		// 00:05 in Berlin is 23:05 UTC the day before: the window follows
		// the NodePool's zone, across the DST change of 29 March too.
		{"window in the NodePool's time zone", seedNodePool("Europe/Berlin"), v1.DisruptionReasonUnderutilized, 19, 0, time.Date(2026, 3, 9, 23, 5, 0, 0, time.UTC), 0},
		{"same UTC time is outside it in UTC", seedNodePool(""), v1.DisruptionReasonUnderutilized, 19, 0, time.Date(2026, 3, 9, 23, 5, 0, 0, time.UTC), 5},
		{"after the DST change, midnight in Berlin is 22:00 UTC", seedNodePool("Europe/Berlin"), v1.DisruptionReasonUnderutilized, 19, 0, time.Date(2026, 3, 30, 22, 5, 0, 0, time.UTC), 0},
		{"and 23:05 UTC is then outside", seedNodePool("Europe/Berlin"), v1.DisruptionReasonUnderutilized, 19, 0, time.Date(2026, 3, 30, 23, 5, 0, 0, time.UTC), 5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Allowed(tc.np, tc.reason, tc.total, tc.disrupting, tc.now)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("Allowed = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestAllowedRejectsBadInput(t *testing.T) {
	np := test.NodePool(func(np *v1.NodePool) {
		np.Annotations = map[string]string{v1.BudgetTimeZoneAnnotationKey: "Mars/Olympus"}
	})
	if _, err := Allowed(np, v1.DisruptionReasonEmpty, 3, 0, time.Now()); err == nil {
		t.Error("an unknown time zone was accepted")
	}
	np = test.NodePool(func(np *v1.NodePool) { np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "many"}} })
	if _, err := Allowed(np, v1.DisruptionReasonEmpty, 3, 0, time.Now()); err == nil {
		t.Error("a budget that is no count was accepted")
	}
}
