package gang

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestKeyOf(t *testing.T) {
	pod := func(mod func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "w"}}
		mod(p)
		return p
	}
	workload := func(p *corev1.Pod) {
		p.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: ptr.To("train")}
	}
	annotated := func(p *corev1.Pod) {
		p.Annotations = map[string]string{AtomicGroupAnnotationKey: "ProvisioningRequest/ml/req"}
	}
	labelled := func(p *corev1.Pod) { p.Labels = map[string]string{PodGroupLabelKey: "pg"} }
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want string
	}{
		{"no group", pod(func(*corev1.Pod) {}), ""},
		{"the Workload API's PodGroup", pod(workload), "scheduling.k8s.io/PodGroup/ml/train"},
		{"Capstan's annotation, as written", pod(annotated), "ProvisioningRequest/ml/req"},
		{"scheduler-plugins' label", pod(labelled), "scheduling.x-k8s.io/PodGroup/ml/pg"},
		{"an empty podGroupName names none", pod(func(p *corev1.Pod) {
			p.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: ptr.To("")}
		}), ""},
		{"the Workload API first", pod(func(p *corev1.Pod) { workload(p); annotated(p); labelled(p) }), "scheduling.k8s.io/PodGroup/ml/train"},
		{"the annotation before the label", pod(func(p *corev1.Pod) { annotated(p); labelled(p) }), "ProvisioningRequest/ml/req"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, KeyOf(tc.pod)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestMinCount(t *testing.T) {
	declared := Declared{"a": 4}
	for _, tc := range []struct {
		key     string
		members int
		want    int
	}{
		{"a", 6, 4},
		{"a", 2, 4},
		{"b", 3, 3},
	} {
		if got := MinCount(tc.key, declared, tc.members); got != tc.want {
			t.Errorf("MinCount(%s, %d) = %d, want %d", tc.key, tc.members, got, tc.want)
		}
	}
}
