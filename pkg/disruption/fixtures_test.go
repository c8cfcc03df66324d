package disruption

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/state"
	"github.com/capstan-dev/capstan/pkg/test"
)

var t0 = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

// cluster is a small world: NodePool "default" and one initialized,
// Ready node per name, each created at t0 with no pod events since.
type cluster struct {
	in Input
	// objs are the objects snapshot built the Snapshot from.
	objs state.Objects
	// pending are unbound pods, seen only by the snapshot.
	pending []*corev1.Pod
}

func newCluster(nodes ...string) *cluster {
	c := &cluster{}
	c.in.NodePools = []*v1.NodePool{test.NodePool(func(np *v1.NodePool) {
		np.Name = "default"
		np.Spec.Disruption.ConsolidateAfter = v1.MustParseNillableDuration("0s")
		np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "100%"}}
	})}
	for _, n := range nodes {
		c.node(n)
	}
	return c
}

func (c *cluster) pool() *v1.NodePool { return c.in.NodePools[0] }

func (c *cluster) node(name string) {
	nc := test.NodeClaim(func(nc *v1.NodeClaim) {
		nc.Name = "nc-" + name
		nc.CreationTimestamp = metav1.NewTime(t0)
		nc.Labels = map[string]string{v1.NodePoolLabelKey: "default"}
		nc.Status.NodeName = name
		nc.Status.ProviderID = "sim://" + name
		nc.Status.Conditions = []metav1.Condition{{Type: v1.ConditionTypeInitialized, Status: metav1.ConditionTrue}}
	})
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.NodePoolLabelKey: "default"}},
		Spec:   corev1.NodeSpec{ProviderID: "sim://" + name},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	c.in.NodeClaims = append(c.in.NodeClaims, nc)
	c.in.Nodes = append(c.in.Nodes, node)
}

func (c *cluster) claim(node string) *v1.NodeClaim {
	for _, nc := range c.in.NodeClaims {
		if nc.Status.NodeName == node {
			return nc
		}
	}
	return nil
}

func (c *cluster) nodeNamed(name string) *corev1.Node {
	for _, n := range c.in.Nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// pod binds a pod to node; daemon makes it a DaemonSet's.
func (c *cluster) pod(name, node string, mods ...func(*corev1.Pod)) {
	p := test.Pod("default", func(p *corev1.Pod) {
		p.Name, p.Spec.NodeName, p.Labels = name, node, map[string]string{"app": "web"}
	})
	for _, m := range mods {
		m(p)
	}
	c.in.Pods = append(c.in.Pods, p)
}

func daemon(p *corev1.Pod) {
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "logs", Controller: ptr.To(true)}}
}

func doNotDisrupt(p *corev1.Pod) {
	p.Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: "true"}
}

// doNotDisruptFor annotates a pod started at start with do-not-disrupt
// value.
func doNotDisruptFor(value string, start time.Time) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: value}
		p.Status.StartTime = &metav1.Time{Time: start}
	}
}

func (c *cluster) pdb(name string, allowed int32) {
	c.in.PDBs = append(c.in.PDBs, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
		Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed},
	})
}

func names(cs []Candidate) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.Node.Name)
	}
	return out
}

// capacity gives node room for cpu (cores), 16Gi of memory and 110 pods:
// the free capacity the snapshot's solver sees.
func (c *cluster) capacity(node, cpu string) {
	n := c.nodeNamed(node)
	n.Status.Allocatable = corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(cpu),
		corev1.ResourceMemory: resource.MustParse("16Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	n.Status.Capacity = n.Status.Allocatable.DeepCopy()
}

// requests makes a pod request cpu (cores).
func requests(cpu string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse(cpu)
	}
}

// drift marks node's NodeClaim Drifted since the given time.
func (c *cluster) drift(node string, since time.Time) {
	meta.SetStatusCondition(&c.claim(node).Status.Conditions, metav1.Condition{
		Type: v1.ConditionTypeDrifted, Status: metav1.ConditionTrue, Reason: DriftNodePool, LastTransitionTime: metav1.NewTime(since),
	})
}

// pendingPod is a pod kube-scheduler marked unschedulable, for the
// snapshot.
func (c *cluster) pendingPod(name string, mods ...func(*corev1.Pod)) {
	p := test.Pod("default", func(p *corev1.Pod) {
		p.Name, p.Labels = name, map[string]string{"app": "pending"}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}
	})
	for _, m := range mods {
		m(p)
	}
	c.pending = append(c.pending, p)
}

// snapshot builds the Input's Snapshot with state.Build from the same
// objects (pending pods included), NodePool "default" offering its. Call
// it last: the snapshot holds copies, later edits don't reach it.
func (c *cluster) snapshot(its ...*cloudprovider.InstanceType) {
	var objs state.Objects
	for _, np := range c.in.NodePools {
		objs.NodePools = append(objs.NodePools, *np)
	}
	for _, nc := range c.in.NodeClaims {
		objs.NodeClaims = append(objs.NodeClaims, *nc)
	}
	for _, n := range c.in.Nodes {
		objs.Nodes = append(objs.Nodes, *n)
	}
	for _, p := range append(append([]*corev1.Pod{}, c.in.Pods...), c.pending...) {
		objs.Pods = append(objs.Pods, *p)
	}
	for _, pdb := range c.in.PDBs {
		objs.PDBs = append(objs.PDBs, *pdb)
	}
	c.objs = objs
	c.in.Snapshot = state.Build(objs, map[string][]*cloudprovider.InstanceType{"default": its}, []string{corev1.DefaultSchedulerName})
}

// podNames are the pods' namespaced names.
func podNames(pods []*corev1.Pod) []string {
	out := []string{}
	for _, p := range pods {
		out = append(out, p.Namespace+"/"+p.Name)
	}
	return out
}
