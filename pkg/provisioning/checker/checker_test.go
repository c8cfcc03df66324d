package checker_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/provisioning/checker"
	"github.com/capstan-dev/capstan/pkg/test"
)

// randomInput is a small random cluster: instance types in two families
// and architectures, spot and on-demand in three zones, a reservation or
// two, zone IDs on some offerings, NodePools with random requirements
// (a custom "team" label among them), taints and limits, existing nodes,
// daemonsets (some selecting instance types or a team, some holding a host
// port), and pods with selectors, terms, tolerations and host ports.
func randomInput(rng *rand.Rand) provisioning.Input {
	zones := []string{"zone-a", "zone-b", "zone-c"}
	var its []*cloudprovider.InstanceType
	for i := range 4 + rng.IntN(8) {
		arch := []string{"amd64", "arm64"}[rng.IntN(2)]
		cpu := int64(1 << rng.IntN(5))
		var offerings cloudprovider.Offerings
		price := 0.05 * float64(cpu)
		for _, z := range zones {
			if rng.IntN(4) == 0 {
				continue
			}
			zoneID := ""
			if rng.IntN(2) == 0 {
				zoneID = "id-" + z
			}
			offerings = append(offerings,
				&cloudprovider.Offering{Zone: z, ZoneID: zoneID, CapacityType: v1.CapacityTypeOnDemand, Price: price, Available: avail(rng)},
				&cloudprovider.Offering{Zone: z, ZoneID: zoneID, CapacityType: v1.CapacityTypeSpot, Price: price * (0.2 + rng.Float64()), Available: avail(rng)},
			)
		}
		if rng.IntN(4) == 0 {
			offerings = append(offerings, &cloudprovider.Offering{Zone: zones[rng.IntN(3)], CapacityType: v1.CapacityTypeReserved,
				ReservationID: fmt.Sprintf("cr-%d", i), Price: price / 1e7, Available: rng.IntN(3)})
		}
		if len(offerings) == 0 {
			continue
		}
		its = append(its, test.InstanceType(test.InstanceTypeOptions{
			Name: fmt.Sprintf("%s.%d", map[string]string{"amd64": "m", "arm64": "g"}[arch], i), CPU: cpu, Memory: 4 * cpu, Arch: arch,
			Pods: int64(4 + rng.IntN(30)), Offerings: offerings,
			Extended: map[bool]corev1.ResourceList{true: {"nvidia.com/gpu": resource.MustParse("1")}}[rng.IntN(5) == 0],
		}))
	}
	var pools []*v1.NodePool
	types := map[string][]*cloudprovider.InstanceType{}
	for i := range 1 + rng.IntN(3) {
		np := test.NodePool(func(np *v1.NodePool) {
			np.Name = fmt.Sprintf("pool-%d", i)
			if rng.IntN(2) == 0 {
				np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements, v1.NodeSelectorRequirementWithMinValues{
					Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: pick(rng, []string{v1.CapacityTypeReserved, v1.CapacityTypeSpot, v1.CapacityTypeOnDemand})})
			}
			if rng.IntN(3) == 0 {
				np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements, v1.NodeSelectorRequirementWithMinValues{
					Key: v1.LabelZone, Operator: corev1.NodeSelectorOpIn, Values: pick(rng, zones)})
			}
			if rng.IntN(3) == 0 {
				// The second NodePool's taint is only a preference, so
				// avoiding it is checked on real solver output too.
				effect := corev1.TaintEffectNoSchedule
				if i == 1 {
					effect = corev1.TaintEffectPreferNoSchedule
				}
				np.Spec.Template.Spec.Taints = []corev1.Taint{{Key: "team", Value: "a", Effect: effect}}
			}
			if rng.IntN(3) == 0 {
				np.Spec.Limits = v1.Limits{corev1.ResourceCPU: *resource.NewQuantity(int64(8+rng.IntN(40)), resource.DecimalSI)}
			}
			if rng.IntN(4) == 0 {
				np.Spec.Limits = v1.Limits{"nodes": *resource.NewQuantity(int64(1+rng.IntN(4)), resource.DecimalSI)}
			}
			// A custom label only the requirements fix: the NodeClaim must
			// carry it for pods and daemonsets that select it.
			switch rng.IntN(4) {
			case 0:
				np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements, v1.NodeSelectorRequirementWithMinValues{
					Key: "team", Operator: corev1.NodeSelectorOpIn, Values: []string{teams[rng.IntN(2)]}})
			case 1:
				np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements, v1.NodeSelectorRequirementWithMinValues{
					Key: "team", Operator: corev1.NodeSelectorOpIn, Values: teams})
			case 2:
				np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements, v1.NodeSelectorRequirementWithMinValues{
					Key: "team", Operator: corev1.NodeSelectorOpExists})
			}
			np.Spec.Template.ObjectMeta.Labels = map[string]string{"pool": np.Name}
		})
		pools = append(pools, np)
		types[np.Name] = its
	}
	var nodes []*provisioning.Node
	for i := range rng.IntN(4) {
		cpu := fmt.Sprint(1 + rng.IntN(8))
		nodes = append(nodes, &provisioning.Node{
			Name: fmt.Sprintf("node-%d", i), NodePool: pools[0].Name, InFlight: rng.IntN(3) == 0, Deleting: rng.IntN(5) == 0,
			Labels:      map[string]string{v1.LabelZone: zones[rng.IntN(3)], v1.LabelArch: "amd64", "pool": pools[0].Name},
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("20")},
			Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)},
		})
	}
	var pods []*corev1.Pod
	for i := range 1 + rng.IntN(40) {
		pods = append(pods, randomPod(rng, fmt.Sprintf("p%d", i), zones))
	}
	var daemons []*corev1.Pod
	if rng.IntN(2) == 0 {
		daemons = append(daemons, randomPod(rng, "daemon", zones))
	}
	// Daemonsets that select some instance types or a team, some holding
	// the host port pods use: their overhead and ports count only where
	// they run.
	for i := range rng.IntN(3) {
		d := randomPod(rng, fmt.Sprintf("daemon-%d", i), zones)
		d.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = *resource.NewMilliQuantity(int64(100+rng.IntN(1500)), resource.DecimalSI)
		var names []string
		for _, it := range its {
			if rng.IntN(2) == 0 {
				names = append(names, it.Name)
			}
		}
		key, values := v1.LabelInstanceType, names
		if rng.IntN(3) == 0 || len(names) == 0 {
			key, values = "team", teams[rng.IntN(2):][:1]
		}
		d.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: corev1.NodeSelectorOpIn, Values: values}}}},
		}}}
		if rng.IntN(2) == 0 {
			d.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 80}}
		}
		daemons = append(daemons, d)
	}
	return provisioning.Input{Pods: pods, Nodes: nodes, NodePools: pools, InstanceTypes: types, DaemonSetPods: daemons,
		Options: provisioning.Options{MaxInstanceTypes: 1 + rng.IntN(6)}}
}

// teams are the values of a custom label NodePool requirements fix.
var teams = []string{"ml", "web"}

func avail(rng *rand.Rand) int {
	if rng.IntN(5) == 0 {
		return 0
	}
	return cloudprovider.Unlimited
}

func pick(rng *rand.Rand, from []string) []string {
	var out []string
	for _, v := range from {
		if rng.IntN(2) == 0 {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		out = from[:1]
	}
	return out
}

func randomPod(rng *rand.Rand, name string, zones []string) *corev1.Pod {
	return test.Pod("default", func(p *corev1.Pod) {
		p.Name = name
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{
			corev1.ResourceCPU:    *resource.NewMilliQuantity(int64(50+rng.IntN(4000)), resource.DecimalSI),
			corev1.ResourceMemory: *resource.NewQuantity(int64(1+rng.IntN(8000))<<20, resource.BinarySI),
		}
		if rng.IntN(8) == 0 {
			p.Spec.Containers[0].Resources.Requests["nvidia.com/gpu"] = resource.MustParse("1")
		}
		if rng.IntN(4) == 0 {
			p.Spec.NodeSelector = map[string]string{v1.LabelArch: []string{"amd64", "arm64"}[rng.IntN(2)]}
		}
		if rng.IntN(5) == 0 {
			if p.Spec.NodeSelector == nil {
				p.Spec.NodeSelector = map[string]string{}
			}
			p.Spec.NodeSelector["team"] = teams[rng.IntN(2)]
		}
		if rng.IntN(10) == 0 {
			if p.Spec.NodeSelector == nil {
				p.Spec.NodeSelector = map[string]string{}
			}
			p.Spec.NodeSelector[v1.LabelZoneID] = "id-" + zones[rng.IntN(3)]
		}
		if rng.IntN(4) == 0 {
			var terms []corev1.NodeSelectorTerm
			for range 1 + rng.IntN(2) {
				terms = append(terms, corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{
					Key: v1.LabelZone, Operator: []corev1.NodeSelectorOperator{corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn}[rng.IntN(2)], Values: pick(rng, zones)}}})
			}
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms}}}
		}
		if rng.IntN(3) == 0 {
			p.Spec.Tolerations = []corev1.Toleration{{Key: "team", Operator: corev1.TolerationOpExists}}
		}
		if rng.IntN(6) == 0 {
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 80}}
		}
		app := map[string]string{"app": []string{"a", "b", "c"}[rng.IntN(3)]}
		p.Labels = app
		keys := []string{corev1.LabelHostname, v1.LabelZone}
		switch rng.IntN(8) {
		case 0:
			p.Spec.Affinity = withPodAffinity(p.Spec.Affinity, false, keys[rng.IntN(2)], app)
		case 1:
			p.Spec.Affinity = withPodAffinity(p.Spec.Affinity, true, v1.LabelZone, app)
		case 2, 3:
			p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
				TopologyKey: keys[rng.IntN(2)], MaxSkew: int32(1 + rng.IntN(2)), WhenUnsatisfiable: corev1.DoNotSchedule,
				LabelSelector: &metav1.LabelSelector{MatchLabels: app},
			}}
		}
		if rng.IntN(6) == 0 {
			p.Spec.InitContainers = []corev1.Container{{Name: "init", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: *resource.NewMilliQuantity(int64(rng.IntN(6000)), resource.DecimalSI)}}}}
		}
	})
}

func withPodAffinity(a *corev1.Affinity, affine bool, key string, l map[string]string) *corev1.Affinity {
	if a == nil {
		a = &corev1.Affinity{}
	}
	t := []corev1.PodAffinityTerm{{TopologyKey: key, LabelSelector: &metav1.LabelSelector{MatchLabels: l}}}
	if affine {
		a.PodAffinity = &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: t}
	} else {
		a.PodAntiAffinity = &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: t}
	}
	return a
}

// The solver's results on random workloads pass the independent checker,
// in both reservation modes.
func TestRandomWorkloadsAreSound(t *testing.T) {
	placed := 0
	for seed := range uint64(400) {
		rng := rand.New(rand.NewPCG(seed, 7))
		in := randomInput(rng)
		if seed%4 == 0 {
			in.Options.ReservationMode = provisioning.ReservationFallback
		}
		r := provisioning.Solve(in)
		if err := checker.Check(in, r); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		placed += len(in.Pods) - len(r.Unplaced)
	}
	if placed < 1000 {
		t.Errorf("only %d pods placed over all seeds; the workloads are too hard to test anything", placed)
	}
}

// The checker fires on results broken on purpose.
func TestCheckerCatchesBrokenResults(t *testing.T) {
	small := test.InstanceType(test.InstanceTypeOptions{Name: "m.large", CPU: 2, Memory: 8})
	reserved := test.InstanceType(test.InstanceTypeOptions{Name: "r.large", CPU: 2, Memory: 8, Offerings: cloudprovider.Offerings{
		{Zone: "zone-a", CapacityType: v1.CapacityTypeReserved, ReservationID: "cr-1", Price: 1e-8, Available: 1},
	}})
	base := func() provisioning.Input {
		return provisioning.Input{
			Pods:          []*corev1.Pod{randomPodNamed("a", "1"), randomPodNamed("b", "500m")},
			NodePools:     []*v1.NodePool{test.NodePool(func(np *v1.NodePool) { np.Name = "default" })},
			InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": {small, reserved}},
		}
	}
	for _, tc := range []struct {
		name    string
		breakIt func(*provisioning.Input, *provisioning.Result)
		want    string
	}{
		{"over-committed claim", func(in *provisioning.Input, r *provisioning.Result) {
			big := randomPodNamed("big", "3")
			in.Pods = append(in.Pods, big)
			r.NewNodeClaims[0].Pods = append(r.NewNodeClaims[0].Pods, big)
		}, "over-committed"},
		{"requirement violated", func(in *provisioning.Input, r *provisioning.Result) {
			r.NewNodeClaims[0].Pods[0].Spec.NodeSelector = map[string]string{v1.LabelArch: "arm64"}
		}, "does not match"},
		{"taint violated", func(in *provisioning.Input, r *provisioning.Result) {
			r.NewNodeClaims[0].Taints = []corev1.Taint{{Key: "gpu", Effect: corev1.TaintEffectNoSchedule}}
		}, "does not tolerate"},
		{"reservation over-booked", func(in *provisioning.Input, r *provisioning.Result) {
			for range 2 {
				c := *r.NewNodeClaims[0]
				c.ReservationID = "cr-1"
				c.InstanceTypes = []*cloudprovider.InstanceType{reserved}
				c.Requirements = c.Requirements.Clone()
				delete(c.Requirements, v1.LabelInstanceType)
				delete(c.Requirements, v1.CapacityTypeLabelKey)
				c.Pods = nil
				r.NewNodeClaims = append(r.NewNodeClaims, &c)
			}
		}, "over-booked"},
		{"pod placed twice", func(in *provisioning.Input, r *provisioning.Result) {
			r.Nominations = append(r.Nominations, provisioning.Nomination{Pod: in.Pods[0], NodeName: "node-x"})
		}, "accounted 2 times"},
		{"limit exceeded", func(in *provisioning.Input, r *provisioning.Result) {
			in.NodePools[0].Spec.Limits = v1.Limits{corev1.ResourceCPU: resource.MustParse("1")}
		}, "exceeds the limit"},
		{"anti-affinity violated", func(in *provisioning.Input, r *provisioning.Result) {
			for _, p := range r.NewNodeClaims[0].Pods {
				p.Labels = map[string]string{"app": "x"}
				p.Spec.Affinity = withPodAffinity(nil, false, corev1.LabelHostname, p.Labels)
			}
		}, "despite anti-affinity"},
		{"affinity violated", func(in *provisioning.Input, r *provisioning.Result) {
			r.NewNodeClaims[0].Pods[0].Spec.Affinity = withPodAffinity(nil, true, corev1.LabelHostname, map[string]string{"app": "elsewhere"})
		}, "affinity on kubernetes.io/hostname is not satisfied"},
		{"spread violated", func(in *provisioning.Input, r *provisioning.Result) {
			for _, p := range r.NewNodeClaims[0].Pods {
				p.Labels = map[string]string{"app": "x"}
				p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{TopologyKey: corev1.LabelHostname, MaxSkew: 1,
					WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: p.Labels}}}
			}
		}, "spread on kubernetes.io/hostname"},
		{"zone undecided", func(in *provisioning.Input, r *provisioning.Result) {
			c := r.NewNodeClaims[0]
			c.InstanceTypes, c.ReservationID = []*cloudprovider.InstanceType{small}, ""
			c.Requirements = c.Requirements.Clone()
			for _, k := range []string{v1.LabelZone, v1.CapacityTypeLabelKey, v1.LabelCapacityReservationID, v1.LabelInstanceType} {
				delete(c.Requirements, k)
			}
			r.NewNodeClaims[0].Pods[0].Spec.Affinity = withPodAffinity(nil, false, v1.LabelZone, map[string]string{"app": "x"})
			r.NewNodeClaims[0].Pods[1].Labels = map[string]string{"app": "x"}
		}, "is not decided"},
		{"host port twice", func(in *provisioning.Input, r *provisioning.Result) {
			for _, p := range r.NewNodeClaims[0].Pods {
				p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 80}}
			}
		}, "host port 80/TCP taken twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := base()
			r := provisioning.Solve(in)
			if err := checker.Check(in, r); err != nil {
				t.Fatalf("unbroken result rejected: %v", err)
			}
			if len(r.NewNodeClaims) != 1 || len(r.NewNodeClaims[0].Pods) != 2 {
				t.Fatalf("want one claim with both pods, got %+v", r)
			}
			tc.breakIt(&in, &r)
			err := checker.Check(in, r)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("checker said %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func randomPodNamed(name, cpu string) *corev1.Pod {
	return test.Pod("default", func(p *corev1.Pod) {
		p.Name = name
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("1Gi")}
	})
}
