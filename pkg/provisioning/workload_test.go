package provisioning_test

import (
	"fmt"
	"math/rand/v2"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/test"
)

func referenceNodePool() *v1.NodePool {
	return nodePool("default", func(np *v1.NodePool) {
		np.Spec.Limits = v1.Limits{corev1.ResourceCPU: resource.MustParse("10000000"), corev1.ResourceMemory: resource.MustParse("10000000Gi")}
	})
}

var (
	benchCPU = []string{"100m", "250m", "500m", "1000m", "1500m"}
	benchMem = []string{"100Mi", "256Mi", "512Mi", "1024Mi", "2048Mi", "4096Mi"}
)

func randomLetter(rng *rand.Rand) string { return string(rune('a' + rng.IntN(7))) }

func benchPod(rng *rand.Rand, i int) *corev1.Pod {
	return pod(fmt.Sprintf("p%d", i), benchCPU[rng.IntN(len(benchCPU))], benchMem[rng.IntN(len(benchMem))])
}

// referenceWorkload is the diverse workload: five equal groups (generic,
// zone spread, hostname spread, zone self-affinity, hostname
// anti-affinity), generated from a seed.
func referenceWorkload(n int, seed uint64) provisioning.Input {
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))
	group := n / 5
	out := make([]*corev1.Pod, 0, n)
	for i := range n {
		p := benchPod(rng, i)
		switch {
		case i < group || i >= 5*group:
			p.Labels = map[string]string{"my-label": randomLetter(rng)}
		case i < 2*group:
			p.Labels = map[string]string{"my-label": randomLetter(rng)}
			p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{TopologyKey: v1.LabelZone, MaxSkew: 1, WhenUnsatisfiable: corev1.DoNotSchedule,
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"my-label": randomLetter(rng)}}}}
		case i < 3*group:
			p.Labels = map[string]string{"my-label": randomLetter(rng)}
			p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{TopologyKey: corev1.LabelHostname, MaxSkew: 1, WhenUnsatisfiable: corev1.DoNotSchedule,
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"my-label": randomLetter(rng)}}}}
		case i < 4*group:
			l := randomLetter(rng)
			p.Labels = map[string]string{"my-affinity": l}
			p.Spec.Affinity = &corev1.Affinity{PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				TopologyKey: v1.LabelZone, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"my-affinity": l}}}}}}
		default:
			p.Labels = map[string]string{"app": "nginx"}
			p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				TopologyKey: corev1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "nginx"}}}}}}
		}
		out = append(out, p)
	}
	return provisioning.Input{Pods: out, NodePools: []*v1.NodePool{referenceNodePool()}, InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": test.ReferenceInstanceTypes()}}
}

// preferencesWorkload: n nginx pods with one random size, a satisfiable
// preferred node affinity (zone-1), an unsatisfiable preferred zone
// anti-affinity (weight 10) and a satisfiable preferred hostname
// anti-affinity (weight 1). Honouring the preferences is one pod per node.
func preferencesWorkload(n int, seed uint64) provisioning.Input {
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))
	cpu, mem := benchCPU[rng.IntN(len(benchCPU))], benchMem[rng.IntN(len(benchMem))]
	nginx := map[string]string{"app": "nginx"}
	out := make([]*corev1.Pod, n)
	for i := range n {
		out[i] = pod(fmt.Sprintf("p%d", i), cpu, mem, func(p *corev1.Pod) {
			p.Labels = nginx
			p.Spec.Affinity = &corev1.Affinity{
				NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 1, Preference: term(v1.LabelZone, "zone-1")}}},
				PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{
					{Weight: 10, PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: v1.LabelZone, LabelSelector: &metav1.LabelSelector{MatchLabels: nginx}}},
					{Weight: 1, PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: corev1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: nginx}}},
				}},
			}
		})
	}
	return provisioning.Input{Pods: out, NodePools: []*v1.NodePool{referenceNodePool()}, InstanceTypes: map[string][]*cloudprovider.InstanceType{"default": test.ReferenceInstanceTypes()}}
}

// reservationWorkload: n hostname-anti-affine pods against a one-slot
// reservation on the smallest type; one is reserved, the rest spot.
func reservationWorkload(n int, seed uint64) provisioning.Input {
	in := referenceWorkload(0, seed)
	its := in.InstanceTypes["default"]
	its[0].Offerings = append(its[0].Offerings, &cloudprovider.Offering{Zone: "zone-1", CapacityType: v1.CapacityTypeReserved, ReservationID: "cr-bench", Price: its[0].Offerings[0].Price / 1e7, Available: 1})
	its[0].Requirements[v1.CapacityTypeLabelKey] = nil
	delete(its[0].Requirements, v1.CapacityTypeLabelKey)
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))
	nginx := map[string]string{"app": "nginx"}
	for i := range n {
		p := benchPod(rng, i)
		p.Labels = nginx
		p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			TopologyKey: corev1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: nginx}}}}}
		in.Pods = append(in.Pods, p)
	}
	return in
}

// cost is the hourly price of a result: each claim's cheapest option at
// its cheapest available offering its requirements allow.
func cost(r provisioning.Result) float64 {
	total := 0.0
	for _, c := range r.NewNodeClaims {
		best := -1.0
		for _, o := range c.InstanceTypes[0].Offerings {
			if o.IsAvailable() && o.CompatibleWith(c.Requirements) && (best < 0 || o.Price < best) {
				best = o.Price
			}
		}
		total += best
	}
	return total
}
