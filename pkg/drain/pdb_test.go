package drain

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// web is a running pod of app web in namespace default, bound to a node.
func web(name string, mods ...func(*corev1.Pod)) *corev1.Pod {
	p := pod(name)
	p.Namespace, p.Labels, p.Spec.NodeName = "default", map[string]string{"app": "web"}, "node-1"
	for _, m := range mods {
		m(p)
	}
	return p
}

func unbound(p *corev1.Pod)  { p.Spec.NodeName = "" }
func deleting(p *corev1.Pod) { now := metav1.Now(); p.DeletionTimestamp = &now }
func finished(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }
func unready(p *corev1.Pod) {
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
}
func inNamespace(ns string) func(*corev1.Pod) { return func(p *corev1.Pod) { p.Namespace = ns } }
func labelled(l map[string]string) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Labels = l }
}

// pods builds n running web pods, then the given ones.
func pods(n int, more ...*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for i := range n {
		out = append(out, web(string(rune('a'+i))))
	}
	return append(out, more...)
}

type budget func(*policyv1.PodDisruptionBudget)

func minAvailable(v intstr.IntOrString) budget {
	return func(p *policyv1.PodDisruptionBudget) { p.Spec.MinAvailable = &v }
}
func maxUnavailable(v intstr.IntOrString) budget {
	return func(p *policyv1.PodDisruptionBudget) { p.Spec.MaxUnavailable = &v }
}
func selecting(s *metav1.LabelSelector) budget {
	return func(p *policyv1.PodDisruptionBudget) { p.Spec.Selector = s }
}

func pdb(mods ...budget) *policyv1.PodDisruptionBudget {
	p := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", Generation: 2},
		Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
	}
	for _, m := range mods {
		m(p)
	}
	return p
}

func status(expected, healthy, desired, allowed int32) policyv1.PodDisruptionBudgetStatus {
	return policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 2, ExpectedPods: expected, CurrentHealthy: healthy, DesiredHealthy: desired, DisruptionsAllowed: allowed}
}

func TestPDBStatus(t *testing.T) {
	for _, tc := range []struct {
		name string
		pdb  *policyv1.PodDisruptionBudget
		pods []*corev1.Pod
		want policyv1.PodDisruptionBudgetStatus
	}{
		{"minAvailable 2 of 3", pdb(minAvailable(intstr.FromInt32(2))), pods(3), status(3, 3, 2, 1)},
		{"minAvailable equal to the pods allows nothing", pdb(minAvailable(intstr.FromInt32(3))), pods(3), status(3, 3, 3, 0)},
		{"minAvailable above the pods allows nothing, never below 0", pdb(minAvailable(intstr.FromInt32(5))), pods(3), status(3, 3, 5, 0)},
		{"minAvailable 50% of 3 rounds up to 2", pdb(minAvailable(intstr.FromString("50%"))), pods(3), status(3, 3, 2, 1)},
		{"minAvailable 100%", pdb(minAvailable(intstr.FromString("100%"))), pods(4), status(4, 4, 4, 0)},
		{"maxUnavailable 1 of 3", pdb(maxUnavailable(intstr.FromInt32(1))), pods(3), status(3, 3, 2, 1)},
		{"maxUnavailable 0", pdb(maxUnavailable(intstr.FromInt32(0))), pods(3), status(3, 3, 3, 0)},
		{"maxUnavailable 10% of 3 rounds up to 1", pdb(maxUnavailable(intstr.FromString("10%"))), pods(3), status(3, 3, 2, 1)},
		{"maxUnavailable 50% of 5 rounds up to 3", pdb(maxUnavailable(intstr.FromString("50%"))), pods(5), status(5, 5, 2, 3)},
		{"maxUnavailable above the pods: desired is 0", pdb(maxUnavailable(intstr.FromInt32(5))), pods(3), status(3, 3, 0, 3)},
		{"unhealthy pods count as expected, not healthy", pdb(maxUnavailable(intstr.FromInt32(1))),
			pods(2, web("pending", unbound), web("unready", unready)), status(4, 2, 3, 0)},
		{"finished pods and pods being deleted count for nothing", pdb(minAvailable(intstr.FromInt32(1))),
			pods(2, web("done", finished), web("leaving", deleting)), status(2, 2, 1, 1)},
		{"pods of other namespaces and labels are not counted", pdb(minAvailable(intstr.FromInt32(1))),
			pods(2, web("elsewhere", inNamespace("team")), web("db", labelled(map[string]string{"app": "db"}))), status(2, 2, 1, 1)},
		{"an empty selector selects every pod of the namespace", pdb(minAvailable(intstr.FromInt32(1)), selecting(&metav1.LabelSelector{})),
			pods(2, web("db", labelled(map[string]string{"app": "db"})), web("elsewhere", inNamespace("team"))), status(3, 3, 1, 2)},
		{"a nil selector selects nothing", pdb(minAvailable(intstr.FromInt32(0)), selecting(nil)), pods(3), status(0, 0, 0, 0)},
		{"matchExpressions", pdb(minAvailable(intstr.FromInt32(1)), selecting(&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"web", "db"}}}})),
			pods(1, web("db", labelled(map[string]string{"app": "db"}))), status(2, 2, 1, 1)},
		{"nothing expected allows nothing, so the first pods are safe", pdb(maxUnavailable(intstr.FromInt32(1))), nil, status(0, 0, 0, 0)},
		{"neither field: the controller expects nothing", pdb(), pods(3), policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 2, CurrentHealthy: 3}},
		{"a selector that does not parse allows nothing", pdb(minAvailable(intstr.FromInt32(0)), selecting(&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Near"}}})),
			pods(3), policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, PDBStatus(tc.pdb, tc.pods, nil)); diff != "" {
				t.Errorf("PDBStatus (-want +got):\n%s", diff)
			}
		})
	}
}

// owned makes a pod one of a controller's (a Deployment's ReplicaSet,
// a DaemonSet …).
func owned(kind, name string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.OwnerReferences = []metav1.OwnerReference{{Kind: kind, Name: name, Controller: ptr.To(true)}}
	}
}

// With the controllers' scale, maxUnavailable and percentages count the
// replicas the controllers want, not the pods there are, as
// kube-controller-manager does.
func TestPDBStatusWithScales(t *testing.T) {
	// web-1 and web-2 are ReplicaSets of Deployment web (3 replicas, in
	// a rollout); db is a StatefulSet of 3; logs a DaemonSet, no scale.
	scales := func(p *corev1.Pod) (string, int32, bool) {
		switch ref := metav1.GetControllerOf(p); ref.Name {
		case "web-1", "web-2":
			return "Deployment/web", 3, true
		case "db":
			return "StatefulSet/db", 3, true
		}
		return "", 0, false
	}
	rs := func(name string) func(*corev1.Pod) { return owned("ReplicaSet", name) }
	for _, tc := range []struct {
		name string
		pdb  *policyv1.PodDisruptionBudget
		pods []*corev1.Pod
		want policyv1.PodDisruptionBudgetStatus
	}{
		{"one pod evicted, its replacement not yet created: nothing more may go", pdb(maxUnavailable(intstr.FromInt32(1))),
			[]*corev1.Pod{web("a", rs("web-1")), web("b", rs("web-1"))}, status(3, 2, 2, 0)},
		{"a Deployment's ReplicaSets count once, by the Deployment's replicas", pdb(maxUnavailable(intstr.FromInt32(1))),
			[]*corev1.Pod{web("a", rs("web-1")), web("b", rs("web-2")), web("c", rs("web-2")), web("d", rs("web-2"))}, status(3, 4, 2, 2)},
		{"controllers add up", pdb(minAvailable(intstr.FromString("50%"))),
			[]*corev1.Pod{web("a", rs("web-1")), web("b", owned("StatefulSet", "db"))}, status(6, 2, 3, 0)},
		{"pods without a controller are left out", pdb(maxUnavailable(intstr.FromInt32(1))),
			[]*corev1.Pod{web("a", rs("web-1")), web("bare")}, status(3, 2, 2, 0)},
		{"only bare pods: nothing is expected", pdb(maxUnavailable(intstr.FromInt32(1))),
			[]*corev1.Pod{web("bare")}, status(0, 1, 0, 0)},
		{"a controller without a scale allows nothing", pdb(maxUnavailable(intstr.FromInt32(1))),
			[]*corev1.Pod{web("a", rs("web-1")), web("logs", owned("DaemonSet", "logs"))}, policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 2, CurrentHealthy: 2}},
		{"an integer minAvailable counts the pods", pdb(minAvailable(intstr.FromInt32(1))),
			[]*corev1.Pod{web("a", rs("web-1")), web("logs", owned("DaemonSet", "logs"))}, status(2, 2, 1, 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, PDBStatus(tc.pdb, tc.pods, scales)); diff != "" {
				t.Errorf("PDBStatus (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHealthy(t *testing.T) {
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{"bound, no conditions: simulate's running pod", web("a"), true},
		{"ready", web("a", func(p *corev1.Pod) {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		}), true},
		{"unbound", web("a", unbound), false},
		{"phase Pending", web("a", func(p *corev1.Pod) { p.Status.Phase = corev1.PodPending }), false},
		{"finished", web("a", finished), false},
		{"being deleted", web("a", deleting), false},
		{"reported unready", web("a", unready), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Healthy(tc.pod); got != tc.want {
				t.Errorf("Healthy = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestEvictable(t *testing.T) {
	withStatus := func(s policyv1.PodDisruptionBudgetStatus, mods ...budget) *policyv1.PodDisruptionBudget {
		p := pdb(mods...)
		p.Status = s
		return p
	}
	allows := withStatus(status(3, 3, 2, 1))
	refuses := withStatus(status(3, 3, 3, 0))
	other := withStatus(status(3, 3, 2, 1), selecting(&metav1.LabelSelector{MatchLabels: map[string]string{"tier": "front"}}))
	other.Name = "front"
	inTeam := withStatus(status(3, 3, 3, 0))
	inTeam.Namespace = "team"
	stale := withStatus(status(3, 3, 2, 1))
	stale.Generation = 3
	alwaysAllow := withStatus(status(3, 2, 3, 0), func(p *policyv1.PodDisruptionBudget) {
		p.Spec.UnhealthyPodEvictionPolicy = ptr.To(policyv1.AlwaysAllow)
	})
	metWithoutIt := withStatus(status(4, 3, 3, 0))
	notMet := withStatus(status(4, 2, 3, 0))
	front := map[string]string{"app": "web", "tier": "front"}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		pdbs []*policyv1.PodDisruptionBudget
		want *policyv1.PodDisruptionBudget
	}{
		{"no PDB", web("a"), nil, nil},
		{"a PDB with disruptions left", web("a"), []*policyv1.PodDisruptionBudget{allows}, nil},
		{"a PDB with none left refuses", web("a"), []*policyv1.PodDisruptionBudget{refuses}, refuses},
		{"only PDBs selecting the pod count", web("a"), []*policyv1.PodDisruptionBudget{other, inTeam}, nil},
		{"the refusing one", web("a"), []*policyv1.PodDisruptionBudget{other, refuses}, refuses},
		{"two PDBs selecting the pod: refused by the first", web("a", labelled(front)), []*policyv1.PodDisruptionBudget{allows, other}, allows},
		{"a status older than its spec refuses", web("a"), []*policyv1.PodDisruptionBudget{stale}, stale},
		{"pending pods go whatever the PDB", web("a", unbound), []*policyv1.PodDisruptionBudget{refuses}, nil},
		{"finished pods go", web("a", finished), []*policyv1.PodDisruptionBudget{refuses}, nil},
		{"pods being deleted go", web("a", deleting), []*policyv1.PodDisruptionBudget{refuses}, nil},
		{"an unready pod under AlwaysAllow goes", web("a", unready), []*policyv1.PodDisruptionBudget{alwaysAllow}, nil},
		{"an unready pod goes when the budget is met without it", web("a", unready), []*policyv1.PodDisruptionBudget{metWithoutIt}, nil},
		{"an unready pod of a disrupted application waits", web("a", unready), []*policyv1.PodDisruptionBudget{notMet}, notMet},
		{"a ready pod waits even when the budget is met", web("a"), []*policyv1.PodDisruptionBudget{metWithoutIt}, metWithoutIt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Evictable(tc.pod, tc.pdbs); got != tc.want {
				t.Errorf("Evictable = %v, want %v", name(got), name(tc.want))
			}
		})
	}
}

func name(p *policyv1.PodDisruptionBudget) string {
	if p == nil {
		return "nil"
	}
	return p.Namespace + "/" + p.Name
}
