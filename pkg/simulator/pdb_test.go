package simulator

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/capstan-dev/capstan/pkg/drain"
	"github.com/capstan-dev/capstan/pkg/manifests"
)

func readyNode(name string, status corev1.ConditionStatus) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status}}
	return n
}

type pdbCounts struct{ Expected, Healthy, Desired, Allowed int32 }

func countsOf(s policyv1.PodDisruptionBudgetStatus) pdbCounts {
	return pdbCounts{s.ExpectedPods, s.CurrentHealthy, s.DesiredHealthy, s.DisruptionsAllowed}
}

// The world's PDBs carry the status kube-controller-manager would give
// them, recomputed whenever they are read: an eviction counts against
// the next one (the Deployment's scale, not its pods, is expected), and
// the pods of a node that stopped are unready.
func TestWorldPDBStatus(t *testing.T) {
	maxOne := intstr.FromInt32(1)
	pdb := policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", Generation: 1},
		Spec:       policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &maxOne, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}},
	}
	set := &manifests.Set{
		Deployments:          []appsv1.Deployment{{ObjectMeta: objectMeta("web"), Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](3), Template: template()}}},
		PodDisruptionBudgets: []policyv1.PodDisruptionBudget{pdb},
	}
	if pdbs := newWorld(&manifests.Set{}).objects().PDBs; pdbs != nil {
		t.Errorf("PDBs %v without any in the manifests", pdbs)
	}
	s := testSimulator(set)
	w := s.world
	w.setNode(readyNode("node", corev1.ConditionTrue))

	objs := w.objects()
	if len(objs.PDBs) != 1 || objs.PDBs[0].Name != "web" || objs.PDBs[0].Status.ObservedGeneration != 1 {
		t.Fatalf("PDBs %+v", objs.PDBs)
	}
	if diff := cmp.Diff(pdbCounts{3, 3, 2, 1}, countsOf(objs.PDBs[0].Status)); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
	if w.pdbs[0].Status.DisruptionsAllowed != 0 {
		t.Error("the world's own PDB was written to; statuses are computed on read")
	}

	// One pod evicted, its replacement not created yet: none may follow.
	pods := w.sortedPods()
	if got := drain.Evictable(pods[0], w.namespacePDBs("ns")); got != nil {
		t.Fatalf("the first eviction refused by %s", got.Name)
	}
	w.deletePod(pods[0])
	live := w.namespacePDBs("ns")
	if diff := cmp.Diff(pdbCounts{3, 2, 2, 0}, countsOf(live[0].Status)); diff != "" {
		t.Errorf("after an eviction (-want +got):\n%s", diff)
	}
	if got := drain.Evictable(pods[1], live); got == nil || got.Name != "web" {
		t.Errorf("a second eviction allowed: %v", got)
	}
	if len(w.namespacePDBs("other")) != 0 {
		t.Error("PDBs of another namespace")
	}

	// The node stops responding: its pods are unready.
	w.setNode(readyNode("node", corev1.ConditionFalse))
	if diff := cmp.Diff(pdbCounts{3, 0, 2, 0}, countsOf(w.objects().PDBs[0].Status)); diff != "" {
		t.Errorf("on a NotReady node (-want +got):\n%s", diff)
	}
	if c := w.pods[podKey(pods[1])].Status.Conditions; len(c) != 0 {
		t.Errorf("the world's pod was marked: %v", c)
	}

	// A timed edit replaces the PDB; a deletion removes it.
	edited := pdb.DeepCopy()
	edited.Spec.MaxUnavailable = nil
	edited.Spec.MinAvailable = ptr.To(intstr.FromInt32(0))
	w.setNode(readyNode("node", corev1.ConditionTrue))
	if msg := apply(s, edited); msg != "replaced (x.yaml, document 2)" {
		t.Errorf("message %q", msg)
	}
	if diff := cmp.Diff(pdbCounts{2, 2, 0, 2}, countsOf(w.objects().PDBs[0].Status)); diff != "" {
		t.Errorf("edited (-want +got):\n%s", diff)
	}
	s.remove(manifests.TimedObject{Delete: true, Kind: "PodDisruptionBudget", Namespace: "ns", Name: "web", Object: edited})
	if pdbs := w.objects().PDBs; len(pdbs) != 0 {
		t.Errorf("PDBs %v after the deletion", pdbs)
	}
}
