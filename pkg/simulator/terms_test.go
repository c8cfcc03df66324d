package simulator_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/capstan-dev/capstan/pkg/simulator"
)

// flavorReturnProfile is one zone whose on-demand a10g (g5.xlarge) is
// sold out until 20m, when capacity returns.
const flavorReturnProfile = `apiVersion: sim.capstan.dev/v1alpha1
kind: CloudProfile
metadata: {name: flavors}
spec:
  region: us-west-2
  zones: [us-west-2a]
  style: aws
  launchLatency: 60s
  capacity:
  - {instanceType: g5.xlarge, zone: us-west-2a, capacityType: on-demand, count: 0}
  events:
  - {at: 20m, type: CapacityChange, instanceType: g5.xlarge, zone: us-west-2a, capacityType: on-demand, count: 4}
---
apiVersion: sim.capstan.dev/v1alpha1
kind: SimNodeClass
metadata: {name: gpu-flavors}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: gpu-flavors
  annotations: {capstan.dev/return-to-preferred: "%s"}
spec:
  template:
    spec:
      requirements:
      - {key: node.kubernetes.io/instance-type, operator: In, values: [g4dn.xlarge, g5.xlarge]}
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
      taints: [{key: nvidia.com/gpu, effect: NoSchedule}]
      nodeClassRef: {group: sim.capstan.dev, kind: SimNodeClass, name: gpu-flavors}
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 5m
`

// flavorReturn simulates examples/gpu-flavors' model (one replica,
// a10g then t4) on flavorReturnProfile under the NodePool's policy.
func flavorReturn(t *testing.T, policy string) *simulator.Result {
	t.Helper()
	workload, err := os.ReadFile("../../examples/gpu-flavors/workload.yaml")
	if err != nil {
		t.Fatal(err)
	}
	w := strings.Replace(string(workload), "replicas: 2", "replicas: 1", 1)
	w = strings.Replace(w, "a10g,l4,t4", "a10g,t4", 1)
	set := read(t, strings.Replace(flavorReturnProfile, "%s", policy, 1)+"---\n"+w)
	return run(t, set, func(o *simulator.Options) { o.Duration = 2 * time.Hour })
}

// With a10g sold out the replica runs on t4, its second flavor. Once
// a10g is back, and has been for return-to-preferred-after, a NodePool
// that opted in (Enabled) moves it to a10g: the replacement is up before
// the t4 node goes, so the model is served throughout. By default the
// node stays on t4: an earlier flavor may cost more.
func TestReturnToEarlierFlavor(t *testing.T) {
	r := flavorReturn(t, "Enabled")
	t4 := nodesWhere(r, func(n simulator.Node) bool { return n.InstanceType == "g4dn.xlarge" })
	a10g := nodesWhere(r, func(n simulator.Node) bool { return n.InstanceType == "g5.xlarge" })
	if len(t4) != 1 || len(a10g) != 1 {
		t.Fatalf("nodes %+v; want one t4 node, then one a10g node", r.Nodes)
	}
	if t4[0].DeletedAt == "" || a10g[0].DeletedAt != "" {
		t.Fatalf("t4 %+v, a10g %+v: want the t4 node replaced by the a10g one", t4[0], a10g[0])
	}
	if at(t, a10g[0].LaunchedAt) < 20*time.Minute || at(t, t4[0].DisruptedAt) < at(t, a10g[0].LaunchedAt) {
		t.Errorf("a10g launched at %s, t4 disrupted at %s: want the return after a10g is back at 20m, its replacement first", a10g[0].LaunchedAt, t4[0].DisruptedAt)
	}
	noPendingBetween(t, r, 2*time.Minute, 0)
	t.Logf("t4 from %s, disrupted %s, deleted %s; a10g from %s", t4[0].LaunchedAt, t4[0].DisruptedAt, t4[0].DeletedAt, a10g[0].LaunchedAt)

	r = flavorReturn(t, "Disabled")
	for _, n := range r.Nodes {
		if n.InstanceType != "g4dn.xlarge" || n.DeletedAt != "" {
			t.Errorf("node %+v: with returns Disabled the t4 node stays", n)
		}
	}
}
