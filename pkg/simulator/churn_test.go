package simulator_test

import (
	"strings"
	"testing"
	"time"

	"github.com/capstan-dev/capstan/pkg/manifests"
	"github.com/capstan-dev/capstan/pkg/simulator"
)

// churning is a NodePool whose nodes expire before they register (an
// expireAfter of 1s, the launch latency given) and a Deployment of four
// one-CPU pods: each NodeClaim is replaced once it expired, for as long
// as the run lasts.
func churning(tb testing.TB, latency string) *manifests.Set {
	return read(tb, `apiVersion: sim.capstan.dev/v1alpha1
kind: CloudProfile
metadata: {name: slow}
spec:
  zones: [us-west-2a]
  launchLatency: `+latency+`
---
apiVersion: sim.capstan.dev/v1alpha1
kind: SimNodeClass
metadata: {name: default}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      expireAfter: 1s
      nodeClassRef: {group: sim.capstan.dev, kind: SimNodeClass, name: default}
      requirements:
      - {key: node.kubernetes.io/instance-type, operator: In, values: [m5.xlarge]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 4
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: registry.k8s.io/pause:3.10
        resources: {requests: {cpu: "1"}}
`)
}

// BenchmarkChurn runs churning for 4 durations (the launches grow with
// the duration) and reports the time per launch, so its growth shows as
// the ratio between sizes. It still grows: the simulated cloud keeps its
// terminated instances, and some of its calls read them all.
func BenchmarkChurn(b *testing.B) {
	for _, d := range []time.Duration{10 * time.Minute, 20 * time.Minute, 40 * time.Minute, 80 * time.Minute} {
		b.Run(d.String(), func(b *testing.B) {
			set := churning(b, "30s")
			launches := 0
			for b.Loop() {
				launches = run(b, set, func(o *simulator.Options) { o.Duration = d }).Summary.NodesLaunched
			}
			b.ReportMetric(float64(launches), "launches")
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*max(launches, 1)), "µs/launch")
		})
	}
}

// NodeClaims that expire before their nodes register are replaced at the
// provisioner's next re-check (Window.Max after the solve), not when some
// unrelated change wakes it, and never by a Node of the terminated
// instance: the churn is visible as launches and Expired deletions, one
// per NodeClaim per re-check, whatever the launch latency.
func TestExpiringBeforeRegistering(t *testing.T) {
	for _, latency := range []string{"30s", "5m"} {
		t.Run(latency, func(t *testing.T) {
			opts := simulator.DefaultOptions()
			opts.Duration = 10 * time.Minute
			r := run(t, churning(t, latency), func(o *simulator.Options) { *o = opts })
			// Two m5.xlarge for the four pods, replaced every re-check.
			if got, most := r.Summary.NodesLaunched, 2*int(opts.Duration/opts.Window.Max); got < most/2 || got > most {
				t.Errorf("%d launches in %s; want the two NodeClaims replaced about every %s (at most %d)", got, opts.Duration, opts.Window.Max, most)
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
