package disruption

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/test"
)

// gpuType is an 8-core GPU type named for its GPU, at price on demand.
func gpuType(gpu string, price float64) *cloudprovider.InstanceType {
	return test.InstanceType(test.InstanceTypeOptions{Name: gpu + ".2xlarge", CPU: 8, Memory: 32, Price: price,
		Extended: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")},
		Labels:   map[string]string{v1.LabelInstanceGPUName: gpu}})
}

// gpus are three flavors, the first preferred and the dearest.
var gpus = []*cloudprovider.InstanceType{gpuType("a100", 3), gpuType("a10g", 1), gpuType("t4", 0.5)}

// soldOut is its with every offering of the named types unavailable.
func soldOut(its []*cloudprovider.InstanceType, names ...string) []*cloudprovider.InstanceType {
	out := make([]*cloudprovider.InstanceType, len(its))
	for i, it := range its {
		out[i] = it
		for _, n := range names {
			if it.Name != n {
				continue
			}
			cp := *it
			cp.Offerings = nil
			for _, o := range it.Offerings {
				o := *o
				o.Available = 0
				cp.Offerings = append(cp.Offerings, &o)
			}
			out[i] = &cp
		}
	}
	return out
}

// servedOn launches node as an on-demand instance of it carrying its GPU
// label.
func (c *cluster) servedOn(node string, it *cloudprovider.InstanceType) {
	c.launched(node, it, v1.CapacityTypeOnDemand, "")
	gpu := it.Requirements.Get(v1.LabelInstanceGPUName).Any()
	c.claim(node).Labels[v1.LabelInstanceGPUName] = gpu
	c.nodeNamed(node).Labels[v1.LabelInstanceGPUName] = gpu
}

// flavored needs a GPU of one of the flavors, in order: one required
// node-affinity term each, as llmaz flavors resolve.
func flavored(flavors ...string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources.Requests["nvidia.com/gpu"] = resource.MustParse("1")
		p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}
		var terms []corev1.NodeSelectorTerm
		for _, f := range flavors {
			terms = append(terms, corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{
				{Key: v1.LabelInstanceGPUName, Operator: corev1.NodeSelectorOpIn, Values: []string{f}}}})
		}
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms}}}
	}
}

func termBlocked(node, msg string) Verdict {
	return Verdict{NodeClaim: "nc-" + node, Node: node, Method: "ReturnToPreferredTerm", Event: EventDisruptionBlocked, Message: msg}
}

func TestReturnToPreferredTerm(t *testing.T) {
	od := v1.CapacityTypeOnDemand
	now := t0.Add(time.Hour)
	onto := func(types ...string) []wantReplacement {
		return []wantReplacement{{pods: []string{"default/llm"}, types: types, allows: onDemandOnly, capacityType: od}}
	}
	enabled := func(c *cluster) { poolAnnotate(c, v1.ReturnToPreferredAnnotationKey, v1.ReturnToPreferredEnabled) }
	cases := []struct {
		name string
		// setup: NodePool "default" allows on-demand only; node a serves
		// pod llm (a100, then a10g, then t4) on an a10g: its second term.
		// The snapshot is built after.
		setup    func(c *cluster)
		its      []*cloudprovider.InstanceType
		history  cloudprovider.UnavailableHistory
		want     []string
		replaced []wantReplacement
		verdicts []Verdict
		eligible int
		wakeAt   time.Time
	}{
		{name: "off by default: an earlier flavor may cost more", setup: func(*cluster) {}, eligible: 0},
		{name: "Disabled", setup: func(c *cluster) {
			poolAnnotate(c, v1.ReturnToPreferredAnnotationKey, v1.ReturnToPreferredDisabled)
		}, eligible: 0},
		// A static NodePool keeps its replicas (docs/static.md).
		{name: "Enabled on a static NodePool", setup: func(c *cluster) {
			enabled(c)
			c.pool().Spec.Replicas = ptr.To[int64](1)
		}, eligible: 0},
		{name: "Enabled: back to the first flavor, dearer as it is", setup: enabled,
			want: []string{"a"}, replaced: onto("a100.2xlarge"), eligible: 1},
		{name: "on the third flavor with the first sold out: the second", its: soldOut(gpus, "a100.2xlarge"), setup: func(c *cluster) {
			enabled(c)
			c.servedOn("a", gpus[2])
		}, want: []string{"a"}, replaced: onto("a10g.2xlarge"), eligible: 1},
		{name: "the earlier flavor still sold out", its: soldOut(gpus, "a100.2xlarge"), setup: enabled,
			verdicts: []Verdict{termBlocked("a", "no earlier term of pod default/llm is launchable (it runs on term 2 of 3)")}, eligible: 1},
		{name: "on its first flavor already", setup: func(c *cluster) {
			enabled(c)
			c.servedOn("a", gpus[0])
		}, eligible: 0},
		{name: "a pod with one term has no order", setup: func(c *cluster) {
			enabled(c)
			c.in.Pods = nil
			c.pod("llm", "a", flavored("a10g"))
		}, eligible: 0},
		{name: "the first flavor unavailable until 5m ago: waits out the 10m", setup: enabled,
			history: cloudprovider.UnavailableHistory{Offerings: map[cloudprovider.OfferingKey]time.Time{
				{CapacityType: od, InstanceType: "a100.2xlarge", Zone: "zone-a"}: now.Add(-5 * time.Minute)}},
			verdicts: []Verdict{termBlocked("a", "an earlier term is available again, but not for 10m0s yet: returning at "+rfc3339(now.Add(5*time.Minute)))},
			eligible: 1, wakeAt: now.Add(5 * time.Minute)},
		{name: "a failed return backs off", setup: func(c *cluster) {
			enabled(c)
			c.annotate("a", v1.ReturnAttemptsAnnotationKey, "1", v1.ReturnNotBeforeAnnotationKey, rfc3339(now.Add(20*time.Minute)))
		}, verdicts: []Verdict{termBlocked("a", "returning to an earlier term waits until "+rfc3339(now.Add(20*time.Minute))+", after 1 failed attempt(s)")},
			eligible: 1, wakeAt: now.Add(20 * time.Minute)},
		{name: "a Drifted budget of 0 holds it", setup: func(c *cluster) {
			enabled(c)
			c.pool().Spec.Disruption.Budgets = []v1.Budget{{Nodes: "0", Reasons: []v1.DisruptionReason{v1.DisruptionReasonDrifted}}, {Nodes: "100%"}}
		}, verdicts: []Verdict{termBlocked("a", "disruption budget of 0 for Drifted")}, eligible: 1},
		{name: "an Underutilized budget of 0 does not", setup: func(c *cluster) {
			enabled(c)
			c.pool().Spec.Disruption.Budgets = []v1.Budget{{Nodes: "0", Reasons: []v1.DisruptionReason{v1.DisruptionReasonUnderutilized}}, {Nodes: "100%"}}
		}, want: []string{"a"}, replaced: onto("a100.2xlarge"), eligible: 1},
		{name: "a do-not-disrupt pod blocks it", setup: func(c *cluster) {
			enabled(c)
			c.in.Pods = nil
			c.pod("llm", "a", flavored("a100", "a10g", "t4"), doNotDisrupt)
		}, verdicts: []Verdict{termBlocked("a", "pod default/llm has do-not-disrupt")}, eligible: 1},
		{name: "an idle a100 node takes the pod: no new node to return on", setup: func(c *cluster) {
			enabled(c)
			c.servedOn("b", gpus[0])
		}, verdicts: []Verdict{termBlocked("a", "its pods need 0 new nodes, not one")}, eligible: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster()
			poolCapacityTypes(c, od)
			c.servedOn("a", gpus[1])
			c.pod("llm", "a", flavored("a100", "a10g", "t4"))
			tc.setup(c)
			its := tc.its
			if its == nil {
				its = gpus
			}
			c.in.Unavailable = tc.history
			c.snapshot(its...)
			d := Plan(c.in, []Method{ReturnToPreferredTerm{}}, now)
			checkPlanned(t, d, ReturnToPreferredTerm{}, tc.want, tc.replaced, tc.verdicts, tc.eligible)
			if !d.WakeAt.Equal(tc.wakeAt) {
				t.Errorf("wake at %s, want %s", d.WakeAt, tc.wakeAt)
			}
		})
	}
}

func TestLaterTerms(t *testing.T) {
	node := &corev1.Node{}
	node.Labels = map[string]string{v1.LabelInstanceGPUName: "t4"}
	pod := func(mods ...func(*corev1.Pod)) *corev1.Pod {
		p := test.Pod("default")
		for _, m := range mods {
			m(p)
		}
		return p
	}
	cases := []struct {
		name string
		pods []*corev1.Pod
		want []int // rank, of, per fallback
	}{
		{"no affinity", []*corev1.Pod{pod()}, nil},
		{"one term", []*corev1.Pod{pod(flavored("t4"))}, nil},
		{"on the first", []*corev1.Pod{pod(flavored("t4", "a10g"))}, nil},
		{"on the third", []*corev1.Pod{pod(flavored("a100", "a10g", "t4"))}, []int{2, 3}},
		{"matching none", []*corev1.Pod{pod(flavored("a100", "a10g"))}, nil},
		{"two pods, one on a later term", []*corev1.Pod{pod(flavored("t4", "a10g")), pod(flavored("a10g", "t4"))}, []int{1, 2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []int
			for _, f := range LaterTerms(node, tc.pods) {
				got = append(got, f.Rank, f.Of)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("fallbacks %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("fallbacks %v, want %v", got, tc.want)
				}
			}
		})
	}
}
