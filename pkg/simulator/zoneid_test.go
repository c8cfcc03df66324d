package simulator_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// zoneIDWorkloads selects zones by topology.k8s.aws/zone-id: one
// Deployment by nodeSelector, one spread over the IDs. us-east-1a has an
// explicit ID; b and c keep their defaults (use1-az2, use1-az3).
const zoneIDWorkloads = `apiVersion: sim.capstan.dev/v1alpha1
kind: CloudProfile
metadata: {name: zone-ids}
spec:
  region: us-east-1
  zones: [us-east-1a, us-east-1b, us-east-1c]
  zoneIDs: {us-east-1a: use1-az6}
---
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
      - {key: node.kubernetes.io/instance-type, operator: In, values: [m6i.large]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: pinned, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: pinned}}
  template:
    metadata: {labels: {app: pinned}}
    spec:
      nodeSelector: {topology.k8s.aws/zone-id: use1-az2}
      containers:
      - {name: app, image: registry.k8s.io/pause:3.10, resources: {requests: {cpu: 500m}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: spread, namespace: default}
spec:
  replicas: 3
  selector: {matchLabels: {app: spread}}
  template:
    metadata: {labels: {app: spread}}
    spec:
      topologySpreadConstraints:
      - {maxSkew: 1, topologyKey: topology.k8s.aws/zone-id, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: spread}}}
      containers:
      - {name: app, image: registry.k8s.io/pause:3.10, resources: {requests: {cpu: 1500m}}}
`

// Pods that select a zone ID run: the simulator binds a pod only to a
// registered Node whose labels satisfy it, so each one running is a Node
// that carries the ID the solver planned for.
func TestPodsSelectingZoneIDsRun(t *testing.T) {
	r := run(t, read(t, zoneIDWorkloads))
	if running(r) != 5 || r.Summary.PodsPending != 0 {
		t.Fatalf("%d pods running, %d pending (%+v); want all 5 running", running(r), r.Summary.PodsPending, r.Pods)
	}
	zoneOf := map[string]string{}
	for _, n := range nodesWhere(r, alive) {
		zoneOf[n.Name] = n.Zone
	}
	zones := map[string][]string{} // by Deployment
	for _, p := range r.Pods {
		_, name, _ := strings.Cut(p.Name, "/")
		app, _, _ := strings.Cut(name, "-")
		zones[app] = append(zones[app], zoneOf[p.Node])
	}
	for _, z := range zones {
		slices.Sort(z)
	}
	// One m6i.large holds one spread pod (1500m of its 2 CPUs), so the
	// spread's pods are on three nodes, one in each zone.
	want := map[string][]string{
		"pinned": {"us-east-1b", "us-east-1b"},
		"spread": {"us-east-1a", "us-east-1b", "us-east-1c"},
	}
	if diff := cmp.Diff(want, zones); diff != "" {
		t.Errorf("pods' zones by Deployment (-want +got):\n%s", diff)
	}
}
