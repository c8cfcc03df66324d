package state

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/gang"
	"github.com/capstan-dev/capstan/pkg/test"
)

// The snapshot carries the min counts PodGroups declare, reports those it
// cannot read, and marks an in-flight NodeClaim launched for a gang.
func TestBuildReadsGangs(t *testing.T) {
	pg := func(name string, minCount any) unstructured.Unstructured {
		return unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
			"metadata": map[string]any{"namespace": "ml", "name": name},
			"spec":     map[string]any{"schedulingPolicy": map[string]any{"gang": map[string]any{"minCount": minCount}}},
		}}
	}
	launching := test.NodeClaim(func(nc *v1.NodeClaim) {
		nc.Name = "gang-0"
		nc.Annotations = map[string]string{gang.AtomicGroupAnnotationKey: "ml/train"}
	})
	s := Build(Objects{PodGroups: []unstructured.Unstructured{pg("train", int64(6)), pg("bad", int64(0))}, NodeClaims: []v1.NodeClaim{*launching}}, nil, []string{corev1.DefaultSchedulerName})
	if diff := cmp.Diff(gang.Declared{gang.WorkloadKey("ml", "train"): 6}, s.Input.AtomicGroups); diff != "" {
		t.Errorf("declared (-want +got):\n%s", diff)
	}
	if len(s.PodGroupErrors) != 1 {
		t.Errorf("errors %v, want the one PodGroup with minCount 0", s.PodGroupErrors)
	}
	if len(s.Input.Nodes) != 1 || s.Input.Nodes[0].AtomicGroup != "ml/train" {
		t.Errorf("in-flight nodes %+v, want gang-0 for ml/train", s.Input.Nodes)
	}
}
