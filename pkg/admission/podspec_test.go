package admission

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// PodSpec reports at the path it is given; the loader's tests in
// pkg/manifests (podspec_test.go) cover each rule in every kind.
func TestPodSpecPaths(t *testing.T) {
	spec := &corev1.PodSpec{
		Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
		}}},
		Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpEqual, Value: "x"}},
	}
	got := messages(PodSpec(spec, field.NewPath("spec", "template", "spec")))
	want := []string{
		`spec.template.spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1`,
		"spec.template.spec.tolerations[0].operator: Invalid value: \"Equal\": operator must be Exists when `key` is empty, which means \"match all values and all keys\"",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("PodSpec (-want +got):\n%s", diff)
	}
}
