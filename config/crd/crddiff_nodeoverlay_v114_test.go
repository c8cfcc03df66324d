package crd_test

import "testing"

// referenceNodeOverlayCRD is the reference's NodeOverlay CRD (v1.7's
// karpenter.sh/v1alpha1 kind, as of v1.14.1); its header names the source
// and licence.
const referenceNodeOverlayCRD = "testdata/karpenter.sh_nodeoverlays.v1.14.1.yaml"

// allowedNodeOverlayDifferences: none so far. docs/api.md lists any for
// users.
var allowedNodeOverlayDifferences = map[string]string{}

// It passes once Capstan serves NodeOverlay.
func TestNodeOverlayCRDMatchesTheReference(t *testing.T) {
	checkAgainstReference(t, referenceNodeOverlayCRD, allowedNodeOverlayDifferences)
}
