package provisioning_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/provisioning"
)

// withFree is an existing node in zone with cpu of its 8 cores taken.
func withFree(name, zone, taken string, mods ...func(*provisioning.Node)) *provisioning.Node {
	n := existingNode(name, zone, pod(name+"-filler", taken, "100Mi"))
	for _, m := range mods {
		m(n)
	}
	return n
}

func tainted(n *provisioning.Node) {
	n.Taints = []corev1.Taint{{Key: "example.com/spare", Effect: corev1.TaintEffectNoSchedule}}
}

func tolerating(p *corev1.Pod) {
	p.Spec.Tolerations = []corev1.Toleration{{Key: "example.com/spare", Operator: corev1.TolerationOpExists}}
}

// The solver skips, for a run of pods alike, the nodes an
// earlier one of the run found full (see cursor.go): a pod that is not
// alike, or whose topology changes a node's verdict, must still be
// offered every node.
func TestRunsOfPodsAlike(t *testing.T) {
	web := map[string]string{"app": "web"}
	zoneTypes := map[string][]*cloudprovider.InstanceType{"default": threeZones()}
	cases := []struct {
		name string
		in   provisioning.Input
		want map[string]string
		// claims are the new claims' pods, by name.
		claims [][]string
	}{
		{
			name: "a smaller pod after a run of larger ones takes the first node with room",
			in: provisioning.Input{
				Pods:      append(pods(3, "3", "1Gi"), pod("small", "500m", "100Mi")),
				Nodes:     []*provisioning.Node{withFree("n0", "zone-a", "7"), withFree("n1", "zone-a", "0")},
				NodePools: []*v1.NodePool{zonePool()}, InstanceTypes: zoneTypes,
			},
			want:   map[string]string{"p0": "n1", "p1": "n1", "small": "n0"},
			claims: [][]string{{"p2"}},
		},
		{
			name: "a claim full for a run of larger pods still takes a smaller one",
			in: provisioning.Input{
				Pods:      append(pods(2, "7", "1Gi"), pod("small", "500m", "100Mi")),
				NodePools: []*v1.NodePool{zonePool()}, InstanceTypes: zoneTypes,
			},
			want:   map[string]string{},
			claims: [][]string{{"p0", "small"}, {"p1"}},
		},
		{
			name: "a pod of the same requests that tolerates a taint takes the node the run could not",
			in: provisioning.Input{
				Pods:      append(pods(2, "3", "1Gi"), pod("tolerant", "3", "1Gi", tolerating)),
				Nodes:     []*provisioning.Node{withFree("n0", "zone-a", "0", tainted), withFree("n1", "zone-a", "0")},
				NodePools: []*v1.NodePool{zonePool()}, InstanceTypes: zoneTypes,
			},
			want: map[string]string{"p0": "n1", "p1": "n1", "tolerant": "n0"},
		},
		{
			name: "a zone spread refuses a node once and takes it when the other zone catches up",
			in: provisioning.Input{
				Pods: pods(2, "100m", "100Mi", labelled(web), spread(v1.LabelZone, 1, web)),
				Nodes: []*provisioning.Node{
					existingNode("n0", "zone-a", pod("running", "100m", "100Mi", labelled(web))),
					existingNode("n1", "zone-b"),
				},
				NodePools: []*v1.NodePool{zonePool("zone-a", "zone-b")}, InstanceTypes: zoneTypes,
			},
			want: map[string]string{"p0": "n1", "p1": "n0"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := solveChecked(t, tc.in)
			if diff := cmp.Diff(tc.want, summarize(r).Nominations); diff != "" {
				t.Errorf("nominations (-want +got):\n%s", diff)
			}
			var claims [][]string
			for _, c := range r.NewNodeClaims {
				var names []string
				for _, p := range c.Pods {
					names = append(names, p.Name)
				}
				claims = append(claims, names)
			}
			if diff := cmp.Diff(tc.claims, claims); diff != "" {
				t.Errorf("claims' pods (-want +got):\n%s", diff)
			}
		})
	}
}
