package simulator_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/capstan-dev/capstan/pkg/manifests"
	"github.com/capstan-dev/capstan/pkg/simulator"
	"github.com/capstan-dev/capstan/pkg/test"
)

// The growth benchmarks (BenchmarkGrowth<Axis>/n=<size>) run `capstan
// simulate` in-process on inputs that grow along one axis, at four sizes
// each, so that how time and peak memory grow is read as a ratio between
// sizes: doubling n should not much more than double either.
// docs/simulate.md ("Scale") records the figures.

// benchGrowth runs one sub-benchmark n=<size> per size: manifest(n) is
// read as `capstan simulate -f` reads a file and simulated with the
// default options (changed by mods), both timed. Beyond time per op it
// reports ns/n (flat when the cost is linear in n) and peak-MB, the
// largest heap during the runs.
func benchGrowth(b *testing.B, sizes []int, manifest func(n int) string, mods ...func(*simulator.Options)) {
	opts := simulator.DefaultOptions()
	for _, m := range mods {
		m(&opts)
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			data := []byte(manifest(n))
			runtime.GC()
			peak := test.SampleHeap(time.Millisecond)
			for b.Loop() {
				set := &manifests.Set{}
				if err := manifests.Read("growth.yaml", data, set); err != nil {
					b.Fatal(err)
				}
				if _, err := simulator.Simulate(context.Background(), set, "", opts); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(peak.Stop())/1e6, "peak-MB")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/n")
		})
	}
}

// growthCluster is a NodePool on its SimNodeClass, the cluster every
// growth input runs on.
const growthCluster = `apiVersion: sim.capstan.dev/v1alpha1
kind: SimNodeClass
metadata: {name: default}
spec: {}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      nodeClassRef: {group: sim.capstan.dev, kind: SimNodeClass, name: default}
      requirements:
      - {key: karpenter.sh/capacity-type, operator: In, values: [spot, on-demand]}
      - {key: node.kubernetes.io/instance-type, operator: In, values: [m6i.large, m6i.xlarge, m6i.2xlarge]}
`

// timedObjects is n timed objects over the first hour, each at its own
// instant: Pods and one-replica Deployments in turn, applied with
// simulate.capstan.dev/apply-at and deleted with delete-at when about 50
// more have been applied, so the cluster keeps its size (the replicas
// axis grows that) and the axis measures the timeline.
func timedObjects(n int) string {
	var out strings.Builder
	out.WriteString(growthCluster)
	step := time.Hour / time.Duration(n)
	for i := range n {
		at := time.Duration(i) * step
		annotations := fmt.Sprintf("%s: %q, %s: %q", manifests.ApplyAtAnnotation, at.String(), manifests.DeleteAtAnnotation, (at + 50*step).String())
		spec := `{containers: [{name: app, image: registry.k8s.io/pause:3.10, resources: {requests: {cpu: 100m, memory: 128Mi}}}]}`
		if i%4 < 2 {
			fmt.Fprintf(&out, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p%d, namespace: default, annotations: {%s}}\nspec: %s\n", i, annotations, spec)
			continue
		}
		fmt.Fprintf(&out, `---
apiVersion: apps/v1
kind: Deployment
metadata: {name: d%d, namespace: default, annotations: {%s}}
spec:
  replicas: 1
  selector: {matchLabels: {app: d%d}}
  template:
    metadata: {labels: {app: d%d}}
    spec: %s
`, i, annotations, i, i, spec)
	}
	return out.String()
}

// BenchmarkGrowthTimedObjects grows the number of timed objects.
func BenchmarkGrowthTimedObjects(b *testing.B) {
	benchGrowth(b, []int{1000, 2000, 4000, 8000}, timedObjects)
}

// profileEvents is a CloudProfile of n events over the two hours, each at
// its own instant, of the kinds that touch running instances, pools and
// prices in turn, over a Deployment of 30 pods.
func profileEvents(n int) string {
	var out strings.Builder
	out.WriteString("apiVersion: sim.capstan.dev/v1alpha1\nkind: CloudProfile\nmetadata: {name: events}\nspec:\n  events:\n")
	step := 2 * time.Hour / time.Duration(n+1)
	zones := []string{"us-west-2a", "us-west-2b", "us-west-2c"}
	for i := range n {
		at := (time.Duration(i) + 1) * step
		zone := zones[i%3]
		switch i % 4 {
		case 0:
			fmt.Fprintf(&out, "  - {at: %q, type: SpotInterruption, instanceType: m6i.large, zone: %s}\n", at, zone)
		case 1:
			fmt.Fprintf(&out, "  - {at: %q, type: RebalanceRecommendation, instanceType: m6i.xlarge, zone: %s}\n", at, zone)
		case 2:
			fmt.Fprintf(&out, "  - {at: %q, type: SpotPriceChange, instanceType: m6i.2xlarge, zone: %s, price: \"0.%d\"}\n", at, zone, 10+i%20)
		case 3:
			fmt.Fprintf(&out, "  - {at: %q, type: CapacityChange, instanceType: m6i.large, zone: %s, capacityType: spot, count: %d}\n", at, zone, 20+i%10)
		}
	}
	out.WriteString("---\n" + growthCluster + `---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 30
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: web, image: registry.k8s.io/pause:3.10, resources: {requests: {cpu: 500m, memory: 1Gi}}}
`)
	return out.String()
}

// BenchmarkGrowthProfileEvents grows the number of cloud profile events.
func BenchmarkGrowthProfileEvents(b *testing.B) {
	benchGrowth(b, []int{5000, 10000, 20000, 40000}, profileEvents)
}

// timedPodsThatStay is n Pods applied 0.3 s apart, each at its own
// instant with simulate.capstan.dev/apply-at, none deleted: the cluster
// grows with the timeline, so every wake finds a larger cluster.
func timedPodsThatStay(n int) string {
	var out strings.Builder
	out.WriteString(growthCluster)
	spec := `{containers: [{name: app, image: registry.k8s.io/pause:3.10, resources: {requests: {cpu: 100m, memory: 128Mi}}}]}`
	for i := range n {
		at := time.Duration(i) * 300 * time.Millisecond
		fmt.Fprintf(&out, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p%d, namespace: default, annotations: {%s: %q}}\nspec: %s\n", i, manifests.ApplyAtAnnotation, at.String(), spec)
	}
	return out.String()
}

// BenchmarkGrowthTimedPodsThatStay grows the number of timed pods that
// stay.
func BenchmarkGrowthTimedPodsThatStay(b *testing.B) {
	// Sizes kept so `make bench` stays within its timeout: the run is still
	// quadratic here (docs/simulate.md, "Timed pods that stay").
	benchGrowth(b, []int{1250, 2500, 5000, 10000}, timedPodsThatStay)
}
