package state

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/gang"
	"github.com/capstan-dev/capstan/pkg/test"
)

// The snapshot carries the min counts PodGroups declare, reports those it
// cannot read, and marks an in-flight NodeClaim launched for a gang, and
// one whose launch failed as deleting.
func TestBuildReadsGangs(t *testing.T) {
	pg := func(name string, minCount any) unstructured.Unstructured {
		return unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
			"metadata": map[string]any{"namespace": "ml", "name": name},
			"spec":     map[string]any{"schedulingPolicy": map[string]any{"gang": map[string]any{"minCount": minCount}}},
		}}
	}
	claim := func(name, launch string, mods ...func(*v1.NodeClaim)) v1.NodeClaim {
		return *test.NodeClaim(append([]func(*v1.NodeClaim){func(nc *v1.NodeClaim) {
			nc.Name = name
			nc.Annotations = map[string]string{gang.AtomicGroupAnnotationKey: "ml/train", gang.AtomicGroupLaunchAnnotationKey: launch}
		}}, mods...)...)
	}
	deleting := func(nc *v1.NodeClaim) { nc.DeletionTimestamp = ptr.To(metav1.Now()) }
	claims := []v1.NodeClaim{claim("gang-0", "gang-0"), claim("old-0", "old-0"), claim("old-1", "old-0", deleting)}
	s := Build(Objects{PodGroups: []unstructured.Unstructured{pg("train", int64(6)), pg("bad", int64(0))}, NodeClaims: claims}, nil, []string{corev1.DefaultSchedulerName})
	if diff := cmp.Diff(gang.Declared{gang.WorkloadKey("ml", "train"): 6}, s.Input.AtomicGroups); diff != "" {
		t.Errorf("declared (-want +got):\n%s", diff)
	}
	if len(s.PodGroupErrors) != 1 {
		t.Errorf("errors %v, want the one PodGroup with minCount 0", s.PodGroupErrors)
	}
	type inFlight struct {
		Name, AtomicGroup string
		Deleting          bool
	}
	var got []inFlight
	for _, n := range s.Input.Nodes {
		got = append(got, inFlight{n.Name, n.AtomicGroup, n.Deleting})
	}
	// old-0's launch failed (old-1 is deleted): it takes no pods until
	// it is released.
	want := []inFlight{{"gang-0", "ml/train", false}, {"old-0", "ml/train", true}, {"old-1", "ml/train", true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("in-flight nodes (-want +got):\n%s", diff)
	}
}
