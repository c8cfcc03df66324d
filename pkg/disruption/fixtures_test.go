package disruption

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/test"
)

var t0 = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

// cluster is a small world: NodePool "default" and one initialized,
// Ready node per name, each created at t0 with no pod events since.
type cluster struct{ in Input }

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
		nc.Status.Conditions = []metav1.Condition{{Type: v1.ConditionTypeInitialized, Status: metav1.ConditionTrue}}
	})
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.NodePoolLabelKey: "default"}},
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
