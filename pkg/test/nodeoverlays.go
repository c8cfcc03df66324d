package test

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/api/v1alpha1"
)

// NodeOverlayCase is a NodeOverlay from the reference's validation tests
// (kubernetes-sigs/karpenter v1.14.1
// pkg/apis/v1alpha1/nodeoverlay_validation_test.go, the It or Entry named
// in Name) or its design (designs/node-overlay.md). An invalid case names
// the Message the API server's error contains; RuntimeInvalid marks a
// manifest the CRD accepts but RuntimeValidate refuses.
type NodeOverlayCase struct {
	Name           string
	Overlay        *v1alpha1.NodeOverlay
	Message        string
	RuntimeInvalid bool
}

// NodeOverlay returns a NodeOverlay as the reference's tests start from
// (karpenter.sh/capacity-type Exists), changed by opts.
func NodeOverlay(name string, opts ...func(*v1alpha1.NodeOverlay)) *v1alpha1.NodeOverlay {
	o := &v1alpha1.NodeOverlay{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.NodeOverlaySpec{Requirements: []v1alpha1.NodeSelectorRequirement{
			{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpExists},
		}},
	}
	for _, opt := range opts {
		opt(o)
	}
	return o
}

func overlayReqs(reqs ...v1alpha1.NodeSelectorRequirement) func(*v1alpha1.NodeOverlay) {
	return func(o *v1alpha1.NodeOverlay) { o.Spec.Requirements = reqs }
}

func overlayReq(key string, op corev1.NodeSelectorOperator, values ...string) v1alpha1.NodeSelectorRequirement {
	return v1alpha1.NodeSelectorRequirement{Key: key, Operator: op, Values: values}
}

func overlayPrice(p string) func(*v1alpha1.NodeOverlay) {
	return func(o *v1alpha1.NodeOverlay) { o.Spec.Price = ptr.To(p) }
}

func overlayAdjustment(p string) func(*v1alpha1.NodeOverlay) {
	return func(o *v1alpha1.NodeOverlay) { o.Spec.PriceAdjustment = ptr.To(p) }
}

func overlayCapacity(name corev1.ResourceName, q string) func(*v1alpha1.NodeOverlay) {
	return func(o *v1alpha1.NodeOverlay) { o.Spec.Capacity = corev1.ResourceList{name: resource.MustParse(q)} }
}

// InvalidNodeOverlays are the reference's invalid examples, each rejected
// by the CRD (a Message) or by RuntimeValidate only (RuntimeInvalid).
func InvalidNodeOverlays() []NodeOverlayCase {
	zone := v1.LabelZone
	cases := []NodeOverlayCase{
		{Name: "should fail for no values for In operator", Overlay: NodeOverlay("in", overlayReqs(overlayReq("Test", corev1.NodeSelectorOpIn))),
			Message: "requirements with operator 'In' must have a value defined"},
		{Name: "should fail for no values for NotIn operator", Overlay: NodeOverlay("notin", overlayReqs(overlayReq("Test", corev1.NodeSelectorOpNotIn))),
			Message: "requirements with operator 'NotIn' must have a value defined"},
		{Name: "should fail for unsupported ops", Overlay: NodeOverlay("op", overlayReqs(overlayReq(zone, "unknown", "test"))),
			Message: "Unsupported value"},
		{Name: "should fail for restricted domains", Overlay: NodeOverlay("domain", overlayReqs(overlayReq("karpenter.sh/test", corev1.NodeSelectorOpIn, "test"))),
			Message: `label domain "karpenter.sh" is restricted`},
		{Name: "design: kubernetes.io/hostname is restricted", Overlay: NodeOverlay("hostname", overlayReqs(overlayReq(corev1.LabelHostname, corev1.NodeSelectorOpIn, "test"))),
			Message: `label "kubernetes.io/hostname" is restricted`},
		{Name: "shout not be able to set both price and priceAdjustment", Overlay: NodeOverlay("both", overlayPrice("0.432"), overlayAdjustment("+10%")),
			Message: "cannot set both 'price' and 'priceAdjustment'"},
		{Name: "should not allow an unsigned priceAdjustment percentage", Overlay: NodeOverlay("adj-pct", overlayAdjustment("1%")), Message: "spec.priceAdjustment"},
		{Name: "should not allow an unsigned priceAdjustment integer", Overlay: NodeOverlay("adj-int", overlayAdjustment("1")), Message: "spec.priceAdjustment"},
		{Name: "should not allow an unsigned priceAdjustment float", Overlay: NodeOverlay("adj-float", overlayAdjustment("1.3")), Message: "spec.priceAdjustment"},
		{Name: "design: a percentage below -100%", Overlay: NodeOverlay("adj-below", overlayAdjustment("-101.1%")), Message: "spec.priceAdjustment"},
		{Name: "should not allow cpu resources override", Overlay: NodeOverlay("cpu", overlayCapacity(corev1.ResourceCPU, "1")), Message: "invalid resource restricted"},
		{Name: "should not allow memory resources override", Overlay: NodeOverlay("memory", overlayCapacity(corev1.ResourceMemory, "34Gi")), Message: "invalid resource restricted"},
		{Name: "should not allow pod resources override", Overlay: NodeOverlay("pods", overlayCapacity(corev1.ResourcePods, "324")), Message: "invalid resource restricted"},
		{Name: "weight above 10000", Overlay: NodeOverlay("heavy", func(o *v1alpha1.NodeOverlay) { o.Spec.Weight = ptr.To[int32](10001) }), Message: "spec.weight"},
		{Name: "weight below 1", Overlay: NodeOverlay("light", func(o *v1alpha1.NodeOverlay) { o.Spec.Weight = ptr.To[int32](0) }), Message: "spec.weight"},
		{Name: "should fail at runtime for requirement keys that are too long", RuntimeInvalid: true,
			Overlay: NodeOverlay("long", overlayReqs(overlayReq("test.com.test/test-"+strings.Repeat("a", 250), corev1.NodeSelectorOpExists)))},
	}
	for i, key := range []string{"test.com.com}", "Test.com/test", "test/test/test", "test/", "/test"} {
		cases = append(cases, NodeOverlayCase{Name: "should fail for invalid requirement keys: " + key,
			Overlay: NodeOverlay(fmt.Sprintf("key-%d", i), overlayReqs(overlayReq(key, corev1.NodeSelectorOpExists))), Message: "spec.requirements[0].key"})
	}
	for _, op := range []corev1.NodeSelectorOperator{corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt, corev1.NodeSelectorOperator("Gte"), corev1.NodeSelectorOperator("Lte")} {
		for i, values := range [][]string{{}, {"1", "2"}, {"a"}, {"-1"}} {
			cases = append(cases, NodeOverlayCase{Name: fmt.Sprintf("should fail with invalid %s values: %q", op, values),
				Overlay: NodeOverlay(strings.ToLower(fmt.Sprintf("%s-%d", op, i)), overlayReqs(overlayReq(zone, op, values...))),
				Message: "requirements operator 'Gt', 'Lt', 'Gte' or 'Lte' must have a single positive integer value"})
		}
	}
	// The reference's "priceAdjustment Invalid Input" and "price Invalid
	// Input" tables both set spec.price.
	for i, p := range []string{"+42", ".5", "42.", "42%", "3,14", "1e10", "0x42", "forty-two", "42a", "42 ", " 42", "42.0.0", "-", ".", "-100.0%", "-101.1%", "-129", "-.42"} {
		cases = append(cases, NodeOverlayCase{Name: fmt.Sprintf("price Invalid Input %q", p), Overlay: NodeOverlay(fmt.Sprintf("price-%d", i), overlayPrice(p)), Message: "spec.price"})
	}
	return cases
}

// ValidNodeOverlays are the reference's valid examples: the tests' and
// the design's manifests.
func ValidNodeOverlays() []NodeOverlayCase {
	zone := v1.LabelZone
	cases := []NodeOverlayCase{
		{Name: "should succeed for valid requirement keys", Overlay: NodeOverlay("keys", overlayReqs(
			overlayReq("Test", corev1.NodeSelectorOpExists), overlayReq("test.com/Test", corev1.NodeSelectorOpExists),
			overlayReq("test.com.com/test", corev1.NodeSelectorOpExists), overlayReq("key-only", corev1.NodeSelectorOpExists)))},
		{Name: "should allow for the karpenter.sh/nodepool label", Overlay: NodeOverlay("nodepool", overlayReqs(overlayReq(v1.NodePoolLabelKey, corev1.NodeSelectorOpIn, "default")))},
		{Name: "should allow supported ops", Overlay: NodeOverlay("ops", overlayReqs(
			overlayReq(zone, corev1.NodeSelectorOpIn, "test"), overlayReq(zone, corev1.NodeSelectorOpGt, "1"), overlayReq(zone, corev1.NodeSelectorOpLt, "1"),
			overlayReq(zone, corev1.NodeSelectorOperator("Gte"), "1"), overlayReq(zone, corev1.NodeSelectorOperator("Lte"), "1"), overlayReq(zone, corev1.NodeSelectorOpNotIn, "1"),
			overlayReq(zone, corev1.NodeSelectorOpExists)))},
		{Name: "should allow kubernetes domains exceptions", Overlay: NodeOverlay("k8s", overlayReqs(
			overlayReq("kubernetes.io/test", corev1.NodeSelectorOpIn, "test"), overlayReq("k8s.io/test", corev1.NodeSelectorOpIn, "test")))},
		{Name: "should allow kubernetes subdomains exceptions", Overlay: NodeOverlay("k8s-sub", overlayReqs(
			overlayReq("subdomain.kubernetes.io/test", corev1.NodeSelectorOpIn, "test"), overlayReq("subdomain.k8s.io/test", corev1.NodeSelectorOpIn, "test")))},
		{Name: "should allow well known label exceptions", Overlay: NodeOverlay("well-known", overlayReqs(
			overlayReq(v1.LabelInstanceType, corev1.NodeSelectorOpIn, "test"), overlayReq(corev1.LabelArchStable, corev1.NodeSelectorOpIn, "test"),
			overlayReq(zone, corev1.NodeSelectorOpIn, "test"), overlayReq(corev1.LabelTopologyRegion, corev1.NodeSelectorOpIn, "test")))},
		{Name: "should allow non-empty set after removing overlapped value", Overlay: NodeOverlay("overlap", overlayReqs(
			overlayReq(zone, corev1.NodeSelectorOpIn, "test", "foo"), overlayReq(zone, corev1.NodeSelectorOpNotIn, "test", "bar")))},
		{Name: "design: empty requirements select every instance type", Overlay: NodeOverlay("everything", overlayReqs([]v1alpha1.NodeSelectorRequirement{}...))},
		{Name: "should allow custom resources", Overlay: NodeOverlay("fuse", overlayCapacity("smarter-devices/fuse", "1"))},
		{Name: "design: hugepages", Overlay: NodeOverlay("hugepages", func(o *v1alpha1.NodeOverlay) {
			o.Spec.Capacity = corev1.ResourceList{"hugepages-2Mi": resource.MustParse("100Mi"), "hugepages-1Gi": resource.MustParse("2Gi")}
		})},
		{Name: "design: price", Overlay: NodeOverlay("price-override", overlayPrice("5.00"))},
		{Name: "should allow integer value", Overlay: NodeOverlay("price-int", overlayPrice("43"))},
		{Name: "should allow float value", Overlay: NodeOverlay("price-float", overlayPrice("34.43"))},
		{Name: "weight 10000", Overlay: NodeOverlay("heaviest", func(o *v1alpha1.NodeOverlay) { o.Spec.Weight = ptr.To[int32](10000) })},
	}
	for i, p := range []string{"+1%", "-1%", "-100%", "+100.102%", "+298%", "+43", "-43", "+34.43", "-34.43", "+5.00", "-7.50", "-10%", "+15%"} {
		cases = append(cases, NodeOverlayCase{Name: fmt.Sprintf("priceAdjustment %q", p), Overlay: NodeOverlay(fmt.Sprintf("adjustment-%d", i), overlayAdjustment(p))})
	}
	return cases
}
