package flavors

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestModelName(t *testing.T) {
	for _, tc := range []struct {
		name     string
		pod      *corev1.Pod
		wantName string
		wantOK   bool
	}{
		{"nil pod", nil, "", false},
		{"no labels", &corev1.Pod{}, "", false},
		{"other labels", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}}}, "", false},
		{"model-serving", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{ModelNameLabelKey: "qwen"}}}, "qwen", true},
		{"empty value still marks a model-serving pod", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{ModelNameLabelKey: ""}}}, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name, ok := ModelName(tc.pod)
			if name != tc.wantName || ok != tc.wantOK {
				t.Errorf("ModelName = %q, %v, want %q, %v", name, ok, tc.wantName, tc.wantOK)
			}
		})
	}
}

func TestOpenModelGVK(t *testing.T) {
	if got := OpenModelGVK.GroupVersion().String() + " " + OpenModelGVK.Kind; got != "llmaz.io/v1alpha1 OpenModel" {
		t.Errorf("OpenModelGVK = %s", got)
	}
}
