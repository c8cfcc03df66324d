package v1_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// nodeOverlayCEL is the source of the NodeOverlay fixtures
// (kubernetes-sigs/karpenter v1.14.1).
const nodeOverlayCEL = "pkg/apis/v1alpha1/nodeoverlay_validation_test.go"

// referenceNodeOverlay is the reference's test NodeOverlay (its
// BeforeEach).
const referenceNodeOverlay = `
apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
spec:
  requirements:
  - {key: karpenter.sh/capacity-type, operator: Exists}
`

func overlayReqs(yaml string) string { return "requirements: " + yaml }

// The reference's NodeOverlay examples; they pass once NodeOverlay
// (v1.7) is served. Its "priceAdjustment Invalid Input" table sets price,
// as the reference's test does.
var nodeOverlayFixtures = []fixture{
	{nodeOverlayCEL, "should fail for no values for In operator", overlayReqs(`[{key: Test, operator: In}]`), true, ""},
	{nodeOverlayCEL, "should fail for no values for NotIn operator", overlayReqs(`[{key: Test, operator: NotIn}]`), true, ""},
	{nodeOverlayCEL, "should succeed for valid requirement keys", overlayReqs(`[{key: Test, operator: Exists}, {key: test.com/Test, operator: Exists}, {key: test.com.com/test, operator: Exists}, {key: key-only, operator: Exists}]`), false, ""},
	{nodeOverlayCEL, "should fail for invalid requirement keys", overlayReqs(`[{key: "test.com.com}", operator: Exists}]`), true, ""},
	{nodeOverlayCEL, "should allow for the karpenter.sh/nodepool label", overlayReqs(`[{key: karpenter.sh/nodepool, operator: In, values: [default]}]`), false, ""},
	{nodeOverlayCEL, "should fail for unsupported ops", overlayReqs(`[{key: topology.kubernetes.io/zone, operator: unknown, values: [test]}]`), true, ""},
	{nodeOverlayCEL, "should allow empty requirements", overlayReqs(`[]`), false, ""},
	{nodeOverlayCEL, "should fail with invalid GT or LT values", overlayReqs(`[{key: topology.kubernetes.io/zone, operator: Gt, values: ["1", "2"]}]`), true, ""},
	{nodeOverlayCEL, "shout not be able to set both price and priceAdjustment", `{price: "0.432", priceAdjustment: "+10%"}`, true, ""},
	{nodeOverlayCEL, "Invalid Input: No explicit plus sign allowed", `price: "+42"`, true, ""},
	{nodeOverlayCEL, "Invalid Input: Must have leading digit", `price: ".5"`, true, ""},
	{nodeOverlayCEL, "Invalid Input: No percentage sign allowed", `price: "42%"`, true, ""},
	{nodeOverlayCEL, "Invalid Input: No scientific notation", `price: "1e10"`, true, ""},
	{nodeOverlayCEL, "Invalid Input: Multiple decimal points", `price: "42.0.0"`, true, ""},
	{nodeOverlayCEL, "should not allow an unsigned priceAdjustment percentage", `priceAdjustment: "1%"`, true, ""},
	{nodeOverlayCEL, "should not allow an unsigned priceAdjustment integer", `priceAdjustment: "1"`, true, ""},
	{nodeOverlayCEL, "should allow positive percentage value for priceAdjustment field", `priceAdjustment: "+1%"`, false, ""},
	{nodeOverlayCEL, "should allow negative percentage -100%", `priceAdjustment: "-100%"`, false, ""},
	{nodeOverlayCEL, "should allow positive percentage greater then 100%", `priceAdjustment: "+100.102%"`, false, ""},
	{nodeOverlayCEL, "should allow negative float value", `priceAdjustment: "-34.43"`, false, ""},
	{nodeOverlayCEL, "should allow integer value", `price: "43"`, false, ""},
	{nodeOverlayCEL, "should allow float value", `price: "34.43"`, false, ""},
	{nodeOverlayCEL, "should allow custom resources", `capacity: {smarter-devices/fuse: "1"}`, false, ""},
	{nodeOverlayCEL, "should not allow cpu resources override", `capacity: {cpu: "1"}`, true, ""},
	{nodeOverlayCEL, "should not allow memory resources override", `capacity: {memory: 34Gi}`, true, ""},
	{nodeOverlayCEL, "should not allow pod resources override", `capacity: {pods: "324"}`, true, ""},
}

func TestReferenceNodeOverlayFixtures(t *testing.T) {
	// Rejections would pass vacuously without the kind.
	if _, err := env.Client.RESTMapper().RESTMapping(schema.GroupKind{Group: "karpenter.sh", Kind: "NodeOverlay"}, "v1alpha1"); err != nil {
		t.Fatalf("NodeOverlay is not served: %v", err)
	}
	runFixtures(t, referenceNodeOverlay, nodeOverlayFixtures)
}
