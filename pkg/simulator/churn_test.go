package simulator

import (
	"context"
	"strings"
	"testing"
	"time"
)

// NodeClaims that expire before their nodes register (an expireAfter of
// 1s) are replaced at the provisioner's next re-check (Window.Max after
// the solve), not when some unrelated change wakes it, and never by a
// Node of the terminated instance: the churn is visible as launches and
// Expired deletions, one per re-check, whatever the launch latency.
func TestExpiringBeforeRegistering(t *testing.T) {
	for _, latency := range []string{"30s", "5m"} {
		t.Run(latency, func(t *testing.T) {
			opts := DefaultOptions()
			opts.Duration = 10 * time.Minute
			r, err := lifecycleSim(t, latency, "1s", opts).Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if got, most := r.Summary.NodesLaunched, int(opts.Duration/opts.Window.Max); got < most/2 || got > most {
				t.Errorf("%d launches in %s; want the NodeClaim replaced about every %s (at most %d)", got, opts.Duration, opts.Window.Max, most)
			}
			for _, n := range r.Nodes {
				if n.DeletedAt != "" && n.DeletionReason != "Expired" || n.Name != n.NodeClaim {
					t.Errorf("node %+v: want it expired before it registered", n)
				}
			}
			for _, e := range r.Events {
				if e.Kind == "InstanceStopped" {
					t.Errorf("a Node registered for a terminated instance: %+v", e)
				}
			}
			for _, p := range r.Pods {
				if !strings.HasPrefix(p.PendingReason, "Nominated: ") {
					t.Errorf("pod %+v; want it waiting for a NodeClaim", p)
				}
			}
		})
	}
}

// BenchmarkChurn runs the churn above (30s to register) for 4 durations,
// the launches growing with the duration, and reports the time per
// launch, so its growth shows as the ratio between sizes. It still grows
// a little: the simulated cloud keeps its terminated instances, and some
// of its calls read them all.
func BenchmarkChurn(b *testing.B) {
	for _, d := range []time.Duration{10 * time.Minute, 20 * time.Minute, 40 * time.Minute, 80 * time.Minute} {
		b.Run(d.String(), func(b *testing.B) {
			opts := DefaultOptions()
			opts.Duration = d
			launches := 0
			for b.Loop() {
				r, err := lifecycleSim(b, "30s", "1s", opts).Run(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				launches = r.Summary.NodesLaunched
			}
			b.ReportMetric(float64(launches), "launches")
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*max(launches, 1)), "µs/launch")
		})
	}
}
