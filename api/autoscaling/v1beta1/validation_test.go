package v1beta1_test

import (
	"context"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	autoscalingv1beta1 "github.com/capstan-dev/capstan/api/autoscaling/v1beta1"
	"github.com/capstan-dev/capstan/config/crd"
	"github.com/capstan-dev/capstan/pkg/test"
)

var env *test.Environment

func TestMain(m *testing.M) {
	os.Exit(test.MainWithEnvironment(m, func(e *test.Environment) { env = e }))
}

func buffer(spec autoscalingv1beta1.CapacityBufferSpec) *autoscalingv1beta1.CapacityBuffer {
	return &autoscalingv1beta1.CapacityBuffer{ObjectMeta: metav1.ObjectMeta{Name: test.RandomName("cb"), Namespace: "default"}, Spec: spec}
}

// invalidBuffers are rejected with the reference's messages
// (pkg/apis/crds/autoscaling.x-k8s.io_capacitybuffers.yaml, v1.14.1).
func invalidBuffers() []struct {
	name    string
	buffer  *autoscalingv1beta1.CapacityBuffer
	field   string
	message string
} {
	return []struct {
		name    string
		buffer  *autoscalingv1beta1.CapacityBuffer
		field   string
		message string
	}{
		{"podTemplateRef without replicas or limits", buffer(autoscalingv1beta1.CapacityBufferSpec{PodTemplateRef: &autoscalingv1beta1.LocalObjectRef{Name: "t"}}),
			"spec", "If podTemplateRef is set, replicas or limits must also be set"},
		{"both refs", buffer(autoscalingv1beta1.CapacityBufferSpec{
			PodTemplateRef: &autoscalingv1beta1.LocalObjectRef{Name: "t"}, ScalableRef: &autoscalingv1beta1.ScalableRef{APIGroup: "apps", Kind: "Deployment", Name: "web"}, Replicas: ptr.To[int32](1),
		}), "spec", "You must define either PodTemplateRef or ScalableRef, but not both"},
		{"negative replicas", buffer(autoscalingv1beta1.CapacityBufferSpec{PodTemplateRef: &autoscalingv1beta1.LocalObjectRef{Name: "t"}, Replicas: ptr.To[int32](-1)}),
			"spec.replicas", "should be greater than or equal to 0"},
		{"negative percentage", buffer(autoscalingv1beta1.CapacityBufferSpec{ScalableRef: &autoscalingv1beta1.ScalableRef{Kind: "Deployment", Name: "web"}, Percentage: ptr.To[int32](-5)}),
			"spec.percentage", "should be greater than or equal to 0"},
		{"empty template name", buffer(autoscalingv1beta1.CapacityBufferSpec{PodTemplateRef: &autoscalingv1beta1.LocalObjectRef{}, Replicas: ptr.To[int32](1)}),
			"spec.podTemplateRef.name", "should be at least 1 chars long"},
	}
}

func TestInvalidCapacityBuffersAreRejected(t *testing.T) {
	for _, tc := range invalidBuffers() {
		t.Run(tc.name, func(t *testing.T) {
			err := env.Client.Create(context.Background(), tc.buffer)
			if err == nil {
				t.Fatalf("accepted; want rejection at %s: %s", tc.field, tc.message)
			}
			if !strings.Contains(err.Error(), tc.field+":") || !strings.Contains(err.Error(), tc.message) {
				t.Fatalf("error %q\ndoes not name field %q with %q", err, tc.field, tc.message)
			}
		})
	}
}

// A valid buffer is accepted and gets the default strategy.
func TestValidCapacityBufferIsDefaulted(t *testing.T) {
	cb := buffer(autoscalingv1beta1.CapacityBufferSpec{
		PodTemplateRef: &autoscalingv1beta1.LocalObjectRef{Name: "t"},
		Limits:         autoscalingv1beta1.Limits{corev1.ResourceCPU: resource.MustParse("4")},
	})
	if err := env.Client.Create(context.Background(), cb); err != nil {
		t.Fatal(err)
	}
	if got := ptr.Deref(cb.Spec.ProvisioningStrategy, ""); got != autoscalingv1beta1.ActiveProvisioningStrategy {
		t.Errorf("provisioningStrategy %q, want the default %q", got, autoscalingv1beta1.ActiveProvisioningStrategy)
	}
}

func TestEveryCELRuleIsExercised(t *testing.T) {
	crds, err := crd.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range crds {
		// The group's other CRD, ProvisioningRequest's, is sig-autoscaling's
		// as published; its rules are exercised in
		// pkg/controllers/provisioningrequest.
		if c.Spec.Group != autoscalingv1beta1.Group || c.Spec.Names.Kind != "CapacityBuffer" {
			continue
		}
		for _, rule := range test.CELRules(c) {
			found := false
			for _, tc := range invalidBuffers() {
				found = found || strings.Contains(rule.Message, tc.message)
			}
			if !found {
				t.Errorf("%s: no test asserts the rule %q", c.Name, rule.Message)
			}
		}
	}
}
