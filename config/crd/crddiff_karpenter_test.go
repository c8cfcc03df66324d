package crd_test

import "testing"

// The reference's karpenter.sh CRDs at the release Capstan's NodePool and
// NodeClaim APIs follow (each file's header names the source and licence).
const (
	referenceNodePoolCRD  = "testdata/karpenter.sh_nodepools.v1.14.1.yaml"
	referenceNodeClaimCRD = "testdata/karpenter.sh_nodeclaims.v1.14.1.yaml"
)

// Reasons shared by both CRDs' allow-lists.
const (
	shortNames = "Capstan adds the short names np/nps and nc/ncs, additive"
	// The reference writes its requirement rules over the whole list and
	// reads values without has(), so a requirement without values fails
	// with a CEL error; Capstan checks each requirement, total over the
	// optional fields, with the reference's messages.
	perRequirementRules = "requirement rules checked per requirement, with the reference's messages"
	// Capstan keeps the per-key rules beside its restricted-domain rules
	// on the list, with the reference's messages at their start.
	keyRulesOnTheList = "key rules on the requirement list, with the reference's messages"
	// The reference's pattern and maxLength sit on the values list, where
	// the API server does not apply them; Capstan applies them to each
	// value and bounds the list so its rules fit the CEL cost budget.
	valuesChecked   = "each value checked as a label value"
	celCostBound    = "bound that keeps the CEL rules within the API server's cost budget"
	taintValueLabel = "taint value syntax as Kubernetes validates it on Nodes"
)

// allowedNodePoolDifferences are the only ways Capstan's NodePool schema
// may differ from the reference's, keyed as schemaDiff writes a difference.
// docs/api.md ("Differences from the reference's v1 schema") lists them for
// users. Differences other parts of the same release close (Balanced,
// static NodePools) are deliberately not listed here.
var allowedNodePoolDifferences = map[string]string{
	"spec.names": shortNames,
	// The reference requires consolidateAfter once disruption is written;
	// Capstan defaults it to 0s, so every manifest the reference accepts is
	// accepted, and one that leaves it out gets the reference's spec-level
	// default.
	"spec.disruption required":                                       "consolidateAfter defaulted rather than required",
	"spec.disruption.consolidateAfter default":                       "consolidateAfter defaulted rather than required",
	"spec.template x-kubernetes-validations":                         "Capstan's control-plane NodePools must exclude spot (docs/api.md)",
	"spec.template.metadata.labels x-kubernetes-validations":         "karpenter.sh/do-not-sync-taints accepted as a template label",
	"spec.template.spec.requirements x-kubernetes-validations":       keyRulesOnTheList,
	"spec.template.spec.requirements[] x-kubernetes-validations":     perRequirementRules,
	"spec.template.spec.requirements[].key x-kubernetes-validations": keyRulesOnTheList,
	"spec.template.spec.requirements[].values maxItems":              celCostBound,
	"spec.template.spec.requirements[].values maxLength":             valuesChecked,
	"spec.template.spec.requirements[].values pattern":               valuesChecked,
	"spec.template.spec.requirements[].values[] maxLength":           valuesChecked,
	"spec.template.spec.requirements[].values[] pattern":             valuesChecked,
	"spec.template.spec.startupTaints maxItems":                      celCostBound,
	"spec.template.spec.startupTaints[].key maxLength":               celCostBound,
	"spec.template.spec.startupTaints[].value maxLength":             taintValueLabel,
	"spec.template.spec.startupTaints[].value pattern":               taintValueLabel,
	"spec.template.spec.taints maxItems":                             celCostBound,
	"spec.template.spec.taints[].key maxLength":                      celCostBound,
	"spec.template.spec.taints[].value maxLength":                    taintValueLabel,
	"spec.template.spec.taints[].value pattern":                      taintValueLabel,
	// The reference records the NodeClass generation for its
	// NodeRegistrationHealthy condition, which Capstan does not have.
	"status.nodeClassObservedGeneration present": "NodeRegistrationHealthy is not supported",
}

// allowedNodeClaimDifferences are the only ways Capstan's NodeClaim schema
// may differ from the reference's; docs/api.md lists them for users.
var allowedNodeClaimDifferences = map[string]string{
	"spec.names": shortNames,
	// NodeClaims are Capstan's to write: they carry keys taken from pods'
	// selectors, so only the per-requirement rules apply.
	"spec.requirements x-kubernetes-validations":       "no restricted-domain rules on NodeClaims",
	"spec.requirements[] x-kubernetes-validations":     perRequirementRules,
	"spec.requirements[].key x-kubernetes-validations": "no restricted-domain rules on NodeClaims",
	"spec.requirements[].values maxItems":              celCostBound,
	"spec.requirements[].values maxLength":             valuesChecked,
	"spec.requirements[].values pattern":               valuesChecked,
	"spec.requirements[].values[] maxLength":           valuesChecked,
	"spec.requirements[].values[] pattern":             valuesChecked,
	"spec.startupTaints maxItems":                      celCostBound,
	"spec.startupTaints[].key maxLength":               celCostBound,
	"spec.startupTaints[].value maxLength":             taintValueLabel,
	"spec.startupTaints[].value pattern":               taintValueLabel,
	"spec.taints maxItems":                             celCostBound,
	"spec.taints[].key maxLength":                      celCostBound,
	"spec.taints[].value maxLength":                    taintValueLabel,
	"spec.taints[].value pattern":                      taintValueLabel,
	// Capstan's conditions are metav1.Condition: it always writes a reason
	// and a message.
	"status.conditions[] required":         "conditions always carry a reason and a message",
	"status.conditions[].reason minLength": "conditions always carry a reason and a message",
	"status.conditions[].reason pattern":   "conditions always carry a reason and a message",
}

// Until the whole release is merged, the NodePool test also reports what
// the Balanced and static-NodePool changes close: the consolidationPolicy
// enum, spec.replicas, status.nodes, the scale subresource and the static
// NodePool rules on spec.
func TestNodePoolCRDMatchesTheReference(t *testing.T) {
	checkAgainstReference(t, referenceNodePoolCRD, allowedNodePoolDifferences)
}

func TestNodeClaimCRDMatchesTheReference(t *testing.T) {
	checkAgainstReference(t, referenceNodeClaimCRD, allowedNodeClaimDifferences)
}
