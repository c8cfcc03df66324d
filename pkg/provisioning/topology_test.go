package provisioning_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/provisioning/checker"
	"github.com/capstan-dev/capstan/pkg/test"
)

func labelled(l map[string]string) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Labels = l }
}

func selector(l map[string]string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: l}
}

func antiAffinity(key string, l map[string]string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: key, LabelSelector: selector(l)}},
		}}
	}
}

func affinity(key string, l map[string]string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Affinity = &corev1.Affinity{PodAffinity: &corev1.PodAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: key, LabelSelector: selector(l)}},
		}}
	}
}

func spread(key string, maxSkew int32, l map[string]string, mods ...func(*corev1.TopologySpreadConstraint)) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		c := corev1.TopologySpreadConstraint{TopologyKey: key, MaxSkew: maxSkew, WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: selector(l)}
		for _, m := range mods {
			m(&c)
		}
		p.Spec.TopologySpreadConstraints = append(p.Spec.TopologySpreadConstraints, c)
	}
}

// threeZones are instance types offered in zone-a, zone-b and zone-c.
func threeZones() []*cloudprovider.InstanceType {
	var its []*cloudprovider.InstanceType
	for _, size := range []int64{2, 4, 8} {
		var offerings cloudprovider.Offerings
		for _, z := range []string{"zone-a", "zone-b", "zone-c"} {
			offerings = append(offerings, &cloudprovider.Offering{Zone: z, CapacityType: v1.CapacityTypeOnDemand, Price: 0.05 * float64(size), Available: cloudprovider.Unlimited})
		}
		its = append(its, test.InstanceType(test.InstanceTypeOptions{Name: fmt.Sprintf("m.%d", size), CPU: size, Memory: 4 * size, Offerings: offerings}))
	}
	return its
}

func zonesOf(r provisioning.Result) map[string]int {
	out := map[string]int{}
	for _, c := range r.NewNodeClaims {
		z := c.Requirements.Get(v1.LabelZone)
		if z.Len() != 1 {
			out["unpinned"] += len(c.Pods)
			continue
		}
		out[z.Any()] += len(c.Pods)
	}
	return out
}

func solveChecked(t *testing.T, in provisioning.Input) provisioning.Result {
	t.Helper()
	r := provisioning.Solve(in)
	if err := checker.Check(in, r); err != nil {
		t.Fatalf("checker: %v", err)
	}
	return r
}

func zonePool(zones ...string) *v1.NodePool {
	return nodePool("default", func(np *v1.NodePool) {
		if len(zones) > 0 {
			np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{{Key: v1.LabelZone, Operator: corev1.NodeSelectorOpIn, Values: zones}}
		}
	})
}

func existingNode(name, zone string, podsOn ...*corev1.Pod) *provisioning.Node {
	return &provisioning.Node{
		Name: name, NodePool: "default",
		Labels:      map[string]string{v1.LabelZone: zone, corev1.LabelHostname: name, v1.NodePoolLabelKey: "default"},
		Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("32Gi"), corev1.ResourcePods: resource.MustParse("110")},
		Pods:        podsOn,
	}
}

func TestAntiAffinity(t *testing.T) {
	web := map[string]string{"app": "web"}
	t.Run("hostname: one pod per node", func(t *testing.T) {
		r := solveChecked(t, provisioning.Input{Pods: pods(4, "100m", "100Mi", labelled(web), antiAffinity(corev1.LabelHostname, web)),
			NodePools: []*v1.NodePool{zonePool()}, InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": threeZones()}})
		if len(r.NewNodeClaims) != 4 {
			t.Errorf("%d claims, want 4", len(r.NewNodeClaims))
		}
	})
	t.Run("zone: against pods on existing nodes", func(t *testing.T) {
		running := pod("running", "100m", "100Mi", labelled(web))
		r := solveChecked(t, provisioning.Input{
			Pods:          pods(2, "100m", "100Mi", labelled(web), antiAffinity(v1.LabelZone, web)),
			Nodes:         []*provisioning.Node{existingNode("n1", "zone-a", running)},
			NodePools:     []*v1.NodePool{zonePool()},
			InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": threeZones()},
		})
		if diff := cmp.Diff(map[string]int{"zone-b": 1, "zone-c": 1}, zonesOf(r)); diff != "" {
			t.Errorf("zones (-want +got):\n%s", diff)
		}
	})
	t.Run("an existing pod's anti-affinity keeps new pods away", func(t *testing.T) {
		loner := pod("loner", "100m", "100Mi", labelled(map[string]string{"app": "db"}), antiAffinity(v1.LabelZone, web))
		r := solveChecked(t, provisioning.Input{
			Pods:          pods(1, "100m", "100Mi", labelled(web)),
			Nodes:         []*provisioning.Node{existingNode("n1", "zone-a", loner)},
			NodePools:     []*v1.NodePool{zonePool()},
			InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": threeZones()},
		})
		if len(r.Nominations) != 0 || zonesOf(r)["zone-a"] != 0 {
			t.Errorf("pod placed in the zone whose pod repels it: nominations %v zones %v", r.Nominations, zonesOf(r))
		}
	})
	t.Run("more pods than zones: the rest wait", func(t *testing.T) {
		r := solveChecked(t, provisioning.Input{Pods: pods(4, "100m", "100Mi", labelled(web), antiAffinity(v1.LabelZone, web)),
			NodePools: []*v1.NodePool{zonePool()}, InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": threeZones()}})
		if len(r.NewNodeClaims) != 3 || len(r.Unplaced) != 1 || r.Unplaced[0].Reason != provisioning.ReasonTopologyUnsatisfiable {
			t.Errorf("claims %d, unplaced %+v", len(r.NewNodeClaims), r.Unplaced)
		}
	})
}

func TestAffinity(t *testing.T) {
	cache := map[string]string{"app": "cache"}
	t.Run("self-affinity on zone keeps the group together", func(t *testing.T) {
		r := solveChecked(t, provisioning.Input{Pods: pods(6, "3", "1Gi", labelled(cache), affinity(v1.LabelZone, cache)),
			NodePools: []*v1.NodePool{zonePool()}, InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": threeZones()}})
		if z := zonesOf(r); len(z) != 1 || z["unpinned"] != 0 {
			t.Errorf("zones %v, want all pods in one zone", z)
		}
	})
	t.Run("follows a running pod's zone", func(t *testing.T) {
		running := pod("running", "100m", "100Mi", labelled(cache))
		n := existingNode("n1", "zone-b", running)
		n.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m"), corev1.ResourceMemory: resource.MustParse("1Gi"), corev1.ResourcePods: resource.MustParse("110")}
		r := solveChecked(t, provisioning.Input{Pods: pods(2, "1", "1Gi", affinity(v1.LabelZone, cache)),
			Nodes: []*provisioning.Node{n}, NodePools: []*v1.NodePool{zonePool()}, InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": threeZones()}})
		if diff := cmp.Diff(map[string]int{"zone-b": 2}, zonesOf(r)); diff != "" {
			t.Errorf("zones (-want +got):\n%s", diff)
		}
	})
	t.Run("affinity to pods that do not exist waits", func(t *testing.T) {
		r := solveChecked(t, provisioning.Input{Pods: pods(1, "1", "1Gi", affinity(v1.LabelZone, cache)),
			NodePools: []*v1.NodePool{zonePool()}, InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": threeZones()}})
		if len(r.Unplaced) != 1 || r.Unplaced[0].Reason != provisioning.ReasonTopologyUnsatisfiable {
			t.Errorf("unplaced %+v", r.Unplaced)
		}
	})
	t.Run("namespaces: a term only sees its namespaces", func(t *testing.T) {
		other := pod("other-ns", "100m", "100Mi", labelled(cache))
		other.Namespace = "other"
		n := existingNode("n1", "zone-b", other)
		n.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m"), corev1.ResourceMemory: resource.MustParse("1Gi"), corev1.ResourcePods: resource.MustParse("110")}
		r := solveChecked(t, provisioning.Input{Pods: pods(1, "1", "1Gi", affinity(v1.LabelZone, cache)),
			Nodes: []*provisioning.Node{n}, NodePools: []*v1.NodePool{zonePool()}, InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": threeZones()}})
		if len(r.Unplaced) != 1 {
			t.Errorf("a pod in another namespace satisfied the affinity: %+v", r)
		}
		withSelector := pods(1, "1", "1Gi", func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				TopologyKey: v1.LabelZone, LabelSelector: selector(cache), NamespaceSelector: selector(map[string]string{"team": "x"}),
			}}}}
		})
		r = solveChecked(t, provisioning.Input{Pods: withSelector, Namespaces: map[string]map[string]string{"other": {"team": "x"}},
			Nodes: []*provisioning.Node{n}, NodePools: []*v1.NodePool{zonePool()}, InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": threeZones()}})
		if diff := cmp.Diff(map[string]int{"zone-b": 1}, zonesOf(r)); diff != "" {
			t.Errorf("namespaceSelector: zones (-want +got):\n%s", diff)
		}
	})
}

func TestTopologySpread(t *testing.T) {
	web := map[string]string{"app": "web"}
	t.Run("zone spread across three zones", func(t *testing.T) {
		r := solveChecked(t, provisioning.Input{Pods: pods(6, "1", "1Gi", labelled(web), spread(v1.LabelZone, 1, web)),
			NodePools: []*v1.NodePool{zonePool()}, InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": threeZones()}})
		if diff := cmp.Diff(map[string]int{"zone-a": 2, "zone-b": 2, "zone-c": 2}, zonesOf(r)); diff != "" {
			t.Errorf("zones (-want +got):\n%s", diff)
		}
	})
	t.Run("a NodePool limited to two zones spreads over two", func(t *testing.T) {
		r := solveChecked(t, provisioning.Input{Pods: pods(6, "1", "1Gi", labelled(web), spread(v1.LabelZone, 1, web)),
			NodePools: []*v1.NodePool{zonePool("zone-a", "zone-b")}, InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": threeZones()}})
		if diff := cmp.Diff(map[string]int{"zone-a": 3, "zone-b": 3}, zonesOf(r)); diff != "" {
			t.Errorf("zones (-want +got):\n%s", diff)
		}
	})
	t.Run("existing pods count toward the skew", func(t *testing.T) {
		var running []*corev1.Pod
		for i := range 3 {
			running = append(running, pod(fmt.Sprintf("r%d", i), "100m", "100Mi", labelled(web)))
		}
		n := existingNode("n1", "zone-a", running...)
		n.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("300m"), corev1.ResourceMemory: resource.MustParse("1Gi"), corev1.ResourcePods: resource.MustParse("110")}
		r := solveChecked(t, provisioning.Input{Pods: pods(4, "1", "1Gi", labelled(web), spread(v1.LabelZone, 1, web)),
			Nodes: []*provisioning.Node{n}, NodePools: []*v1.NodePool{zonePool()}, InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": threeZones()}})
		if diff := cmp.Diff(map[string]int{"zone-b": 2, "zone-c": 2}, zonesOf(r)); diff != "" {
			t.Errorf("zones (-want +got):\n%s", diff)
		}
	})
	t.Run("minDomains above the domains there are: at most maxSkew per domain", func(t *testing.T) {
		r := solveChecked(t, provisioning.Input{
			Pods:      pods(5, "1", "1Gi", labelled(web), spread(v1.LabelZone, 1, web, func(c *corev1.TopologySpreadConstraint) { c.MinDomains = ptr.To[int32](4) })),
			NodePools: []*v1.NodePool{zonePool()}, InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": threeZones()}})
		if diff := cmp.Diff(map[string]int{"zone-a": 1, "zone-b": 1, "zone-c": 1}, zonesOf(r)); diff != "" {
			t.Errorf("zones (-want +got):\n%s", diff)
		}
		if len(r.Unplaced) != 2 {
			t.Errorf("%d unplaced, want 2", len(r.Unplaced))
		}
	})
	t.Run("matchLabelKeys splits the count by the pod's own value", func(t *testing.T) {
		mk := func(rev string) []*corev1.Pod {
			return pods(3, "1", "1Gi", labelled(map[string]string{"app": "web", "rev": rev}), spread(v1.LabelZone, 1, web, func(c *corev1.TopologySpreadConstraint) { c.MatchLabelKeys = []string{"rev"} }))
		}
		in := append(mk("1"), mk("2")...)
		for i, p := range in {
			p.Name = fmt.Sprintf("p%d", i)
		}
		r := solveChecked(t, provisioning.Input{Pods: in, NodePools: []*v1.NodePool{zonePool()}, InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": threeZones()}})
		if diff := cmp.Diff(map[string]int{"zone-a": 2, "zone-b": 2, "zone-c": 2}, zonesOf(r)); diff != "" {
			t.Errorf("zones (-want +got):\n%s", diff)
		}
	})
	t.Run("nodeTaintsPolicy Honor leaves out a tainted NodePool's zone", func(t *testing.T) {
		tainted := nodePool("tainted", func(np *v1.NodePool) {
			np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{{Key: v1.LabelZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"zone-c"}}}
			np.Spec.Template.Spec.Taints = []corev1.Taint{{Key: "dedicated", Effect: corev1.TaintEffectNoSchedule}}
		})
		honor := corev1.NodeInclusionPolicyHonor
		in := provisioning.Input{
			Pods:          pods(4, "1", "1Gi", labelled(web), spread(v1.LabelZone, 1, web, func(c *corev1.TopologySpreadConstraint) { c.NodeTaintsPolicy = &honor })),
			NodePools:     []*v1.NodePool{zonePool("zone-a", "zone-b"), tainted},
			InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": threeZones(), "tainted": threeZones()},
		}
		r := provisioning.Solve(in)
		if diff := cmp.Diff(map[string]int{"zone-a": 2, "zone-b": 2}, zonesOf(r)); diff != "" {
			t.Errorf("Honor: zones (-want +got):\n%s", diff)
		}
		ignore := corev1.NodeInclusionPolicyIgnore
		for _, p := range in.Pods {
			p.Spec.TopologySpreadConstraints[0].NodeTaintsPolicy = &ignore
		}
		r = provisioning.Solve(in)
		if len(r.Unplaced) != 2 {
			t.Errorf("Ignore: zone-c counts as an empty domain, so only 2 pods fit; %d unplaced", len(r.Unplaced))
		}
	})
	t.Run("hostname spread: one per node at maxSkew 1", func(t *testing.T) {
		r := solveChecked(t, provisioning.Input{Pods: pods(3, "100m", "100Mi", labelled(web), spread(corev1.LabelHostname, 1, web)),
			NodePools: []*v1.NodePool{zonePool()}, InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": threeZones()}})
		if len(r.NewNodeClaims) != 3 {
			t.Errorf("%d claims, want 3", len(r.NewNodeClaims))
		}
	})
	t.Run("ScheduleAnyway is a preference", func(t *testing.T) {
		r := solveChecked(t, provisioning.Input{Pods: pods(4, "100m", "100Mi", labelled(web), spread(v1.LabelZone, 1, web, func(c *corev1.TopologySpreadConstraint) {
			c.WhenUnsatisfiable = corev1.ScheduleAnyway
		})), NodePools: []*v1.NodePool{zonePool("zone-a")}, InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": threeZones()}})
		if len(r.Unplaced) != 0 {
			t.Errorf("unplaced %+v", r.Unplaced)
		}
	})
}

func TestVolumeTopology(t *testing.T) {
	wffc := storagev1.VolumeBindingWaitForFirstConsumer
	withClaim := func(name string) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: name}}}}
		}
	}
	vols := provisioning.Volumes{
		Claims: map[string]*corev1.PersistentVolumeClaim{
			"default/bound":   {Spec: corev1.PersistentVolumeClaimSpec{VolumeName: "pv-1"}},
			"default/unbound": {Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To("zonal")}},
		},
		PersistentVolumes: map[string]*corev1.PersistentVolume{"pv-1": {Spec: corev1.PersistentVolumeSpec{NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{term(v1.LabelZone, "zone-c")},
		}}}}},
		StorageClasses: map[string]*storagev1.StorageClass{"zonal": {VolumeBindingMode: &wffc, AllowedTopologies: []corev1.TopologySelectorTerm{
			{MatchLabelExpressions: []corev1.TopologySelectorLabelRequirement{{Key: v1.LabelZone, Values: []string{"zone-b"}}}},
		}}},
	}
	r := solveChecked(t, provisioning.Input{
		Pods:      []*corev1.Pod{pod("bound", "1", "1Gi", withClaim("bound")), pod("unbound", "1", "1Gi", withClaim("unbound")), pod("missing", "1", "1Gi", withClaim("nope"))},
		NodePools: []*v1.NodePool{zonePool()}, InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": threeZones()}, Volumes: vols,
	})
	got := map[string]string{}
	for _, c := range r.NewNodeClaims {
		for _, p := range c.Pods {
			got[p.Name] = c.Requirements.Get(v1.LabelZone).String()
		}
	}
	want := map[string]string{"bound": "topology.kubernetes.io/zone In [zone-c]", "unbound": "topology.kubernetes.io/zone In [zone-b]"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("zones (-want +got):\n%s", diff)
	}
	if len(r.Unplaced) != 1 || r.Unplaced[0].Reason != provisioning.ReasonVolumeNotFound {
		t.Errorf("unplaced %+v, want the pod with the missing claim", r.Unplaced)
	}
}

// An existing t4 node with room, and a NodePool that can launch t4g: a pod
// preferring t4g, then t4 (ordered terms) gets a new t4g node.
func TestOrderedTermsBeatExistingCapacity(t *testing.T) {
	t4Node := &provisioning.Node{Name: "t4-node", NodePool: "default",
		Labels:      map[string]string{v1.LabelInstanceGPUName: "t4", corev1.LabelHostname: "t4-node"},
		Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("32Gi"), corev1.ResourcePods: resource.MustParse("110"), "nvidia.com/gpu": resource.MustParse("1")},
	}
	t4g := test.InstanceType(test.InstanceTypeOptions{Name: "g5g.2xlarge", CPU: 8, Memory: 16, Arch: "arm64", Labels: map[string]string{v1.LabelInstanceGPUName: "t4g"},
		Extended: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}})
	r := solveChecked(t, provisioning.Input{
		Pods:          pods(1, "1", "1Gi", requiredTerms(term(v1.LabelInstanceGPUName, "t4g"), term(v1.LabelInstanceGPUName, "t4"))),
		Nodes:         []*provisioning.Node{t4Node},
		NodePools:     []*v1.NodePool{nodePool("default")},
		InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": {t4g}},
	})
	if len(r.Nominations) != 0 || len(r.NewNodeClaims) != 1 || r.NewNodeClaims[0].InstanceTypes[0].Name != "g5g.2xlarge" {
		t.Errorf("want a new t4g node, got nominations %v claims %d", r.Nominations, len(r.NewNodeClaims))
	}
}

// Counting existing pods by shape (Node.Groups, as state.Build sets
// them) decides exactly what counting them one by one does.
func TestGroupedCountingMatchesPerPod(t *testing.T) {
	web, db := map[string]string{"app": "web"}, map[string]string{"app": "db"}
	nodes := func() []*provisioning.Node {
		var out []*provisioning.Node
		for i, zone := range []string{"zone-a", "zone-a", "zone-b", "zone-c"} {
			var running []*corev1.Pod
			for j := range i + 1 {
				running = append(running,
					pod(fmt.Sprintf("w%d-%d", i, j), "100m", "100Mi", labelled(web), spread(v1.LabelZone, 1, web)),
					pod(fmt.Sprintf("d%d-%d", i, j), "100m", "100Mi", labelled(db), antiAffinity(corev1.LabelHostname, db)))
			}
			out = append(out, existingNode(fmt.Sprintf("n%d", i), zone, running...))
		}
		return out
	}
	input := func(ns []*provisioning.Node) provisioning.Input {
		pending := append(pods(5, "1", "1Gi", labelled(web), spread(v1.LabelZone, 1, web)), pods(3, "500m", "1Gi", labelled(db), antiAffinity(corev1.LabelHostname, db))...)
		for i, p := range pending {
			p.Name = fmt.Sprintf("p%d", i)
		}
		return provisioning.Input{Pods: pending, Nodes: ns, NodePools: []*v1.NodePool{zonePool()}, InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": threeZones()}}
	}
	perPod := solveChecked(t, input(nodes()))
	grouped := nodes()
	shapes := provisioning.NewPodShapes()
	for _, n := range grouped {
		n.Groups = shapes.Group(n.Pods)
	}
	byShape := solveChecked(t, input(grouped))
	view := func(r provisioning.Result) (map[string]int, []string, int) {
		var nominated []string
		for _, n := range r.Nominations {
			nominated = append(nominated, n.Pod.Name+"@"+n.NodeName)
		}
		return zonesOf(r), nominated, len(r.Unplaced)
	}
	wantZones, wantNominated, wantUnplaced := view(perPod)
	gotZones, gotNominated, gotUnplaced := view(byShape)
	if !cmp.Equal(wantZones, gotZones) || !cmp.Equal(wantNominated, gotNominated) || wantUnplaced != gotUnplaced {
		t.Errorf("grouped: zones %v, nominated %v, %d unplaced; per pod: %v, %v, %d", gotZones, gotNominated, gotUnplaced, wantZones, wantNominated, wantUnplaced)
	}
	if len(wantNominated) == 0 && len(wantZones) == 0 {
		t.Fatal("nothing placed: the case tests nothing")
	}
}
