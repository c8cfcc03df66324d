package simulator_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/capstan-dev/capstan/pkg/simulator"
)

// The solver's growth axes (NodePools, DaemonSets, replicas), on the
// harness of growth_test.go; docs/simulate.md ("Scale: the solver's
// axes") records the figures.

// growthDeployment is a Deployment of n replicas of 500m and 1Gi.
func growthDeployment(n int) string {
	return fmt.Sprintf(`---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: %d
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: web, image: registry.k8s.io/pause:3.10, resources: {requests: {cpu: 500m, memory: 1Gi}}}
`, n)
}

// nodePools is n on-demand NodePools on one SimNodeClass, and 3 pods.
func nodePools(n int) string {
	var out strings.Builder
	out.WriteString("apiVersion: sim.capstan.dev/v1alpha1\nkind: SimNodeClass\nmetadata: {name: default}\nspec: {}\n")
	for i := range n {
		fmt.Fprintf(&out, `---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: pool-%d}
spec:
  template:
    spec:
      nodeClassRef: {group: sim.capstan.dev, kind: SimNodeClass, name: default}
      requirements:
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
`, i)
	}
	out.WriteString(growthDeployment(3))
	return out.String()
}

// BenchmarkGrowthNodePools grows the number of NodePools.
func BenchmarkGrowthNodePools(b *testing.B) {
	benchGrowth(b, []int{250, 500, 1000, 2000}, nodePools, growthDuration(30*time.Minute))
}

// daemonSets is n DaemonSets of 10m and 16Mi each on growthCluster's
// types, whose pod slots they outnumber from 29 on: the 10 pods of the
// Deployment wait (NoInstanceTypeFits) and are solved again every batch.
func daemonSets(n int) string {
	var out strings.Builder
	out.WriteString(growthCluster)
	for i := range n {
		fmt.Fprintf(&out, `---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent-%d, namespace: default}
spec:
  selector: {matchLabels: {app: agent-%d}}
  template:
    metadata: {labels: {app: agent-%d}}
    spec:
      containers:
      - {name: agent, image: registry.k8s.io/pause:3.10, resources: {requests: {cpu: 10m, memory: 16Mi}}}
`, i, i, i)
	}
	out.WriteString(growthDeployment(10))
	return out.String()
}

// BenchmarkGrowthDaemonSets grows the number of DaemonSets.
func BenchmarkGrowthDaemonSets(b *testing.B) {
	benchGrowth(b, []int{50, 100, 200, 400}, daemonSets, growthDuration(30*time.Minute))
}

// BenchmarkGrowthReplicas grows one Deployment's replicas on
// growthCluster; BenchmarkSolveReference100000 (pkg/provisioning) is the
// solver's own cost for the largest.
func BenchmarkGrowthReplicas(b *testing.B) {
	benchGrowth(b, []int{12500, 25000, 50000, 100000}, func(n int) string { return growthCluster + growthDeployment(n) }, growthDuration(30*time.Minute))
}

func growthDuration(d time.Duration) func(*simulator.Options) {
	return func(o *simulator.Options) { o.Duration = d }
}
