package api

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
)

func TestNewSchemeKnowsEveryKind(t *testing.T) {
	s, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	for _, gvk := range []string{"NodePool", "NodeClaim"} {
		if !s.Recognizes(v1.SchemeGroupVersion.WithKind(gvk)) {
			t.Errorf("scheme does not know %s", gvk)
		}
	}
	if !s.Recognizes(simv1alpha1.SchemeGroupVersion.WithKind("SimNodeClass")) || !s.Recognizes(corev1.SchemeGroupVersion.WithKind("Pod")) {
		t.Errorf("scheme misses SimNodeClass or core types")
	}
	if !s.Recognizes(awsv1.SchemeGroupVersion.WithKind("EC2NodeClass")) {
		t.Errorf("scheme misses EC2NodeClass")
	}
}
