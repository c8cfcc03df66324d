package simulator_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/capstan-dev/capstan/pkg/manifests"
)

// spreadDeployment is a Deployment of the given replicas spread over
// three zones on spot m6i.2xlarge, with a spot interruption in one zone
// every 20 minutes.
func spreadDeployment(tb testing.TB, replicas int) *manifests.Set {
	var events strings.Builder
	for i := 1; i <= 5; i++ {
		fmt.Fprintf(&events, "  - {at: %dm, type: SpotInterruption, instanceType: m6i.2xlarge, zone: us-west-2%c}\n", 20*i, "abc"[i%3])
	}
	return read(tb, `apiVersion: sim.capstan.dev/v1alpha1
kind: CloudProfile
metadata: {name: interruptions}
spec:
  events:
`+events.String()+`---
apiVersion: sim.capstan.dev/v1alpha1
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
      - {key: node.kubernetes.io/instance-type, operator: In, values: [m6i.2xlarge]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: `+fmt.Sprint(replicas)+`
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      topologySpreadConstraints:
      - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}
      containers:
      - name: web
        image: registry.k8s.io/pause:3.10
        resources: {requests: {cpu: 500m, memory: 1Gi}}
`)
}

// BenchmarkSimulateDeployment runs 2 hours of virtual time of
// spreadDeployment and reports pods simulated per second of wall time;
// docs/simulate.md records the figures.
func BenchmarkSimulateDeployment(b *testing.B) {
	for _, replicas := range []int{1000, 10000} {
		b.Run(fmt.Sprint(replicas), func(b *testing.B) {
			set := spreadDeployment(b, replicas)
			b.ReportAllocs()
			nodes := 0
			for b.Loop() {
				nodes = run(b, set).Summary.NodesLaunched
			}
			b.ReportMetric(float64(replicas*b.N)/b.Elapsed().Seconds(), "pods/s")
			b.ReportMetric(float64(nodes), "nodes")
		})
	}
}
