package interruption

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
)

// Done lists the notices acted on for good, so a source that keeps
// notices can drop them (docs/aws.md, "Interruptions"): an interruption
// once its NodeClaim is interrupted or already going, a rebalance
// recommendation once reported (or replaced, when the NodePool opts in);
// never a notice no NodeClaim owns yet, nor a preemptible limit still
// ahead.
func TestDone(t *testing.T) {
	D := now.Add(24 * time.Hour)
	cases := []struct {
		name  string
		n     cloudprovider.InterruptionNotice
		claim Claim
		at    time.Time
		done  bool
	}{
		{"spot interruption", notice("a", cloudprovider.SpotInterruption, now.Add(2*time.Minute)), claim("a"), now, true},
		{"capacity reservation interruption", notice("a", cloudprovider.CapacityReservationInterruption, now.Add(2*time.Minute)), claim("a"), now, true},
		{"unhealthy", notice("a", cloudprovider.InstanceUnhealthy, now), claim("a"), now, true},
		{"already deleting with that deadline", notice("a", cloudprovider.ScheduledChange, now.Add(time.Hour)), claim("a", deletingBy(now.Add(time.Hour))), now, true},
		{"rebalance reported", notice("a", cloudprovider.RebalanceRecommendation, time.Time{}), claim("a"), now, true},
		{"rebalance replaced", notice("a", cloudprovider.RebalanceRecommendation, time.Time{}), claim("a", rebalance(v1.RebalanceReplace)), now, true},
		{"no NodeClaim for it yet", notice("x", cloudprovider.SpotInterruption, now.Add(2*time.Minute)), claim("a"), now, false},
		{"preemptible limit far off", notice("a", cloudprovider.PreemptibleMaxLifetime, D), claim("a"), now, false},
		{"preemptible limit in the margin", notice("a", cloudprovider.PreemptibleMaxLifetime, D), claim("a"), D.Add(-20 * time.Minute), false},
		{"preemptible limit at its notice", notice("a", cloudprovider.PreemptibleMaxLifetime, D), claim("a"), D.Add(-PreemptionNotice), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := (&Handler{}).Step([]cloudprovider.InterruptionNotice{tc.n}, claims(tc.claim), tc.at)
			var want []cloudprovider.InterruptionNotice
			if tc.done {
				want = []cloudprovider.InterruptionNotice{tc.n}
			}
			if diff := cmp.Diff(want, d.Done); diff != "" {
				t.Errorf("Done (-want +got):\n%s", diff)
			}
		})
	}
}
