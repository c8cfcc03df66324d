package simulator

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/capstan-dev/capstan/pkg/manifests"
)

func template() corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
			Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")},
		}}}},
	}
}

func names(w *world) []string {
	var out []string
	for _, p := range w.sortedPods() {
		out = append(out, p.Name)
	}
	slices.Sort(out)
	return out
}

func TestWorkloadsKeepTheirReplicas(t *testing.T) {
	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, Namespace: "ns"} }
	set := &manifests.Set{
		Deployments:  []appsv1.Deployment{{ObjectMeta: meta("web"), Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](3), Template: template()}}},
		StatefulSets: []appsv1.StatefulSet{{ObjectMeta: meta("db"), Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](2), Template: template(), VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}}}}}},
		Jobs:         []batchv1.Job{{ObjectMeta: meta("batch"), Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](5), Completions: ptr.To[int32](2), Template: template()}}},
	}
	w := newWorld(set)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, wl := range w.workloads {
		wl.reconcile(w, rng)
	}
	if got := len(w.pods); got != 7 {
		t.Fatalf("%d pods, want 3 + 2 + min(5, 2)", got)
	}
	for _, p := range w.pods {
		if q := p.Spec.Containers[0].Resources.Requests["nvidia.com/gpu"]; q.Value() != 1 {
			t.Errorf("pod %s requests %v GPUs; requests default to limits when the pod is created", p.Name, q.Value())
		}
		if p.Spec.SchedulerName != corev1.DefaultSchedulerName || len(p.OwnerReferences) != 1 {
			t.Errorf("pod %s: scheduler %q, owners %v", p.Name, p.Spec.SchedulerName, p.OwnerReferences)
		}
	}
	if p := w.pods["ns/db-1"]; p == nil || p.Spec.Volumes[0].PersistentVolumeClaim.ClaimName != "data-db-1" {
		t.Errorf("statefulset pod db-1 with its own claim data-db-1: %v", p)
	}
	if diff := cmp.Diff([]string{"data-db-0", "data-db-1"}, []string{w.claimsPVC[0].Name, w.claimsPVC[1].Name}); diff != "" {
		t.Errorf("claims (-want +got):\n%s", diff)
	}

	// Scale down: the newest pods go; a deleted pod is replaced.
	web := w.workloads[0]
	before := names(w)
	web.replicas = 1
	created, deleted := web.reconcile(w, rng)
	if created != 0 || deleted != 2 {
		t.Errorf("scaling 3 → 1 created %d, deleted %d", created, deleted)
	}
	w.deletePod(w.pods["ns/db-0"])
	for _, wl := range w.workloads {
		wl.reconcile(w, rng)
	}
	if _, ok := w.pods["ns/db-0"]; !ok {
		t.Error("statefulset pod db-0 was not recreated under its own name")
	}
	if len(w.pods) != 5 || slices.Equal(before, names(w)) {
		t.Errorf("pods %v after scaling web to 1", names(w))
	}
}
