package simulator_test

import (
	"strings"
	"testing"
	"time"

	"github.com/capstan-dev/capstan/pkg/simulator"
)

// placementHeader is a profile, a SimNodeClass and the start of a NodePool
// "default" limited to two instance types; each case appends to it.
const placementHeader = `apiVersion: sim.capstan.dev/v1alpha1
kind: CloudProfile
metadata: {name: placement}
spec:
  region: us-east-1
  zones: [us-east-1a]
---
apiVersion: sim.capstan.dev/v1alpha1
kind: SimNodeClass
metadata: {name: default}
spec: {}
`

func nodePoolYAML(name, extra string) string {
	return `---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: ` + name + `}
spec:
  template:
    spec:
      nodeClassRef: {group: sim.capstan.dev, kind: SimNodeClass, name: default}
      requirements:
      - {key: node.kubernetes.io/instance-type, operator: In, values: [m6i.large, m6i.4xlarge]}
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
` + extra
}

func deploymentYAML(name string, replicas int, podSpec string) string {
	return `---
apiVersion: apps/v1
kind: Deployment
metadata: {name: ` + name + `, namespace: default}
spec:
  replicas: ` + string(rune('0'+replicas)) + `
  selector: {matchLabels: {app: ` + name + `}}
  template:
    metadata: {labels: {app: ` + name + `}}
    spec:
` + podSpec + `      containers:
      - {name: app, image: registry.k8s.io/pause:3.10, resources: {requests: {cpu: 500m}}}
`
}

// withHostPort makes a manifest's one container hold host port 8080.
func withHostPort(manifest string) string {
	return strings.Replace(manifest, "resources: {requests:", "ports: [{containerPort: 8080, hostPort: 8080}], resources: {requests:", 1)
}

func daemonSetYAML(name, podSpec, cpu string) string {
	return `---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: ` + name + `, namespace: kube-system}
spec:
  selector: {matchLabels: {app: ` + name + `}}
  template:
    metadata: {labels: {app: ` + name + `}}
    spec:
` + podSpec + `      containers:
      - {name: agent, image: registry.k8s.io/pause:3.10, resources: {requests: {cpu: ` + cpu + `}}}
`
}

// Each case of issue 17 through simulate, for 30 minutes of virtual time:
// what runs, what stays pending (with which reason) and which nodes were
// launched. Before the fixes, the first case launched a node every ten
// seconds and the others launched nodes their pods could not use.
func TestPlacementThroughSimulate(t *testing.T) {
	cases := []struct {
		name      string
		manifests string
		running   int
		pending   string // the pending pods' reason, if any
		types     []string
	}{
		{
			name: "a requirement label reaches the node; a DoesNotExist pod is not bound there and causes no runaway",
			manifests: nodePoolYAML("default", "      - {key: team, operator: In, values: [ml]}\n") +
				deploymentYAML("ml", 2, "      nodeSelector: {team: ml}\n") +
				deploymentYAML("other", 1, "      affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: team, operator: DoesNotExist}]}]}}}\n"),
			running: 2, pending: "IncompatibleRequirements", types: []string{"m6i.large"},
		},
		{
			name: "daemonsets selecting other instance types add no overhead",
			manifests: nodePoolYAML("default", "") + deploymentYAML("web", 1, "") +
				daemonSetYAML("big-agent", "      affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: node.kubernetes.io/instance-type, operator: In, values: [m6i.4xlarge]}]}]}}}\n", "1800m"),
			running: 1, types: []string{"m6i.large"},
		},
		{
			name: "a daemonset's host port: no node is launched for a pod that needs it",
			manifests: nodePoolYAML("default", "") + withHostPort(deploymentYAML("proxy", 1, "")) +
				withHostPort(daemonSetYAML("edge", "", "100m")),
			running: 0, pending: "NoInstanceTypeFits", types: nil,
		},
		{
			name: "PreferNoSchedule NodePools are avoided while another fits",
			manifests: nodePoolYAML("spare", "      taints: [{key: example.com/spare, effect: PreferNoSchedule}]\n  weight: 100\n") +
				nodePoolYAML("default", "") + deploymentYAML("web", 2, ""),
			running: 2, types: []string{"m6i.large"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, read(t, placementHeader+tc.manifests), func(o *simulator.Options) { o.Duration = 30 * time.Minute })
			if got := running(r); got != tc.running {
				t.Errorf("%d pods running; want %d (%+v)", got, tc.running, r.Pods)
			}
			for _, p := range r.Pods {
				if p.Node == "" && (tc.pending == "" || !strings.HasPrefix(p.PendingReason, tc.pending)) {
					t.Errorf("pod %s pending with %q; want %q", p.Name, p.PendingReason, tc.pending)
				}
			}
			var types []string
			for _, n := range r.Nodes {
				types = append(types, n.InstanceType)
				if n.NodePool == "spare" {
					t.Errorf("node %s launched from the PreferNoSchedule NodePool", n.Name)
				}
			}
			if strings.Join(types, ",") != strings.Join(tc.types, ",") {
				t.Errorf("launched %v; want %v", types, tc.types)
			}
		})
	}
}
