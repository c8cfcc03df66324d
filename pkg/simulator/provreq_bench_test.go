package simulator_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/capstan-dev/capstan/pkg/manifests"
	"github.com/capstan-dev/capstan/pkg/simulator"
)

// atomicRequests are n best-effort-atomic ProvisioningRequests of eight
// 3-vCPU workers each, one a minute from the start, on a cloud with the
// default 30s launch latency.
func atomicRequests(tb testing.TB, n int) *manifests.Set {
	var b strings.Builder
	b.WriteString(`apiVersion: sim.capstan.dev/v1alpha1
kind: SimNodeClass
metadata: {name: default}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      nodeClassRef: {group: sim.capstan.dev, kind: SimNodeClass, name: default}
      requirements:
      - {key: node.kubernetes.io/instance-type, operator: In, values: [m6i.xlarge]}
---
apiVersion: v1
kind: PodTemplate
metadata: {name: worker, namespace: default}
template:
  spec:
    containers:
    - name: worker
      image: registry.k8s.io/pause:3.10
      resources: {requests: {cpu: "3", memory: 1Gi}}
`)
	for i := range n {
		fmt.Fprintf(&b, `---
apiVersion: autoscaling.x-k8s.io/v1
kind: ProvisioningRequest
metadata:
  name: job-%d
  namespace: default
  annotations: {simulate.capstan.dev/apply-at: %dm}
spec:
  provisioningClassName: best-effort-atomic-scale-up.autoscaling.x-k8s.io
  podSets:
  - podTemplateRef: {name: worker}
    count: 8
`, i, i)
	}
	return read(tb, b.String())
}

// BenchmarkProvisioningRequestToProvisioned simulates atomic requests and
// reports, per request, the virtual time from its creation to
// Provisioned (launch and registration of its eight nodes on the
// simulated cloud) and the wall time simulating it took; docs/batch.md
// records the figures.
func BenchmarkProvisioningRequestToProvisioned(b *testing.B) {
	const requests = 20
	set := atomicRequests(b, requests)
	var virtual float64
	for b.Loop() {
		r := run(b, set, func(o *simulator.Options) { o.Duration = time.Duration(requests+5) * time.Minute })
		virtual = 0
		for _, pr := range r.ProvisioningRequests {
			if pr.ProvisionedAt == "" {
				b.Fatalf("%s not provisioned: %s %s", pr.Name, pr.Reason, pr.Message)
			}
			virtual += pr.ProvisionedAfter
		}
	}
	b.ReportMetric(virtual/requests, "virtual-s/request")
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N*requests), "wall-ms/request")
}
