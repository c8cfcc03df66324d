package api

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	autoscalingv1 "k8s.io/autoscaler/cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/api/v1alpha1"
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
	if !s.Recognizes(v1alpha1.SchemeGroupVersion.WithKind("NodeOverlay")) {
		t.Errorf("scheme misses NodeOverlay")
	}
}

// The core scheme knows Capstan's own kinds and no provider's: the
// controller adds only its cloud's NodeClasses.
func TestNewCoreSchemeKnowsNoProviderKind(t *testing.T) {
	s, err := NewCoreScheme()
	if err != nil {
		t.Fatal(err)
	}
	if !s.Recognizes(v1.SchemeGroupVersion.WithKind("NodePool")) || !s.Recognizes(corev1.SchemeGroupVersion.WithKind("Pod")) {
		t.Errorf("core scheme misses NodePool or core types")
	}
	if !s.Recognizes(autoscalingv1.SchemeGroupVersion.WithKind("ProvisioningRequest")) {
		t.Errorf("core scheme misses ProvisioningRequest")
	}
	for _, gvk := range []schema.GroupVersionKind{simv1alpha1.SchemeGroupVersion.WithKind("SimNodeClass"), awsv1.SchemeGroupVersion.WithKind("EC2NodeClass")} {
		if s.Recognizes(gvk) {
			t.Errorf("core scheme knows %s, a provider's kind", gvk)
		}
	}
}
