package simulator_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// An atomic ProvisioningRequest too big for the NodePool's limits holds
// nothing, so it blocks no disruption: the node emptied at 4m goes
// (Emptiness) and the one left, drifted by the NodePool's change at 6m,
// is replaced (docs/batch.md, "Capacity buffers": only virtual pods that
// fit now move with their node).
func TestUnplaceableRequestBlocksNoDisruption(t *testing.T) {
	r := run(t, read(t, unplaceableRequest))
	var reasons []string
	for _, n := range r.Nodes {
		reasons = append(reasons, n.DeletionReason)
	}
	// Two nodes for web's two replicas, then web's replacement.
	slices.Sort(reasons)
	if diff := cmp.Diff([]string{"", "Drifted", "Empty"}, reasons); diff != "" {
		t.Errorf("nodes' deletion reasons (-want +got):\n%s", diff)
	}
	for _, e := range r.Events {
		if strings.Contains(e.Message, "virtual") {
			t.Errorf("event %s %s %s names a virtual pod", e.At, e.Kind, e.Message)
		}
	}
	if len(r.ProvisioningRequests) != 1 || r.ProvisioningRequests[0].Phase != "Pending" || r.ProvisioningRequests[0].Reason != "CapacityIsNotFound" {
		t.Errorf("requests %+v, want too-big Pending (CapacityIsNotFound)", r.ProvisioningRequests)
	}
}

// unplaceableRequest: a NodePool of at most three 4-vCPU nodes, web on
// two of them (one replica each) until 4m, one replica after; at 1m a
// request for four 3-vCPU workers, all or none, which the limit never
// allows; at 6m the NodePool's template changes.
const unplaceableRequest = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: training}
spec:
  template:
    spec:
      requirements:
      - {key: node.kubernetes.io/instance-type, operator: In, values: [c4.xlarge]}
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
      nodeClassRef: {group: sim.capstan.dev, kind: SimNodeClass, name: training}
  limits: {cpu: "12"}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: training
  annotations: {simulate.capstan.dev/apply-at: 6m}
spec:
  template:
    metadata:
      labels: {team: ml}
    spec:
      requirements:
      - {key: node.kubernetes.io/instance-type, operator: In, values: [c4.xlarge]}
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
      nodeClassRef: {group: sim.capstan.dev, kind: SimNodeClass, name: training}
  limits: {cpu: "12"}
---
apiVersion: sim.capstan.dev/v1alpha1
kind: SimNodeClass
metadata: {name: training}
---
apiVersion: sim.capstan.dev/v1alpha1
kind: CloudProfile
metadata: {name: training}
spec:
  region: ap-northeast-1
  zones: [ap-northeast-1a]
  style: aws
  launchLatency: 20s
---
apiVersion: v1
kind: PodTemplate
metadata: {name: worker, namespace: default}
template:
  spec:
    containers:
    - name: worker
      image: registry.k8s.io/pause:3.10
      resources:
        requests: {cpu: "3", memory: 1Gi}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      topologySpreadConstraints:
      - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}
      containers:
      - name: web
        image: registry.k8s.io/pause:3.10
        resources:
          requests: {cpu: "1", memory: 1Gi}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
  annotations: {simulate.capstan.dev/apply-at: 4m}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      topologySpreadConstraints:
      - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}
      containers:
      - name: web
        image: registry.k8s.io/pause:3.10
        resources:
          requests: {cpu: "1", memory: 1Gi}
---
apiVersion: autoscaling.x-k8s.io/v1
kind: ProvisioningRequest
metadata:
  name: too-big
  namespace: default
  annotations: {simulate.capstan.dev/apply-at: 1m}
spec:
  provisioningClassName: best-effort-atomic-scale-up.autoscaling.x-k8s.io
  podSets:
  - podTemplateRef: {name: worker}
    count: 4
`
