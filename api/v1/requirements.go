package v1

import corev1 "k8s.io/api/core/v1"

// NodeSelectorRequirementWithMinValues is a node selector requirement with
// an optional minimum number of distinct values a launch must keep open
// (for example at least 5 instance types for spot flexibility).
//
// +kubebuilder:validation:XValidation:message="requirements with operator 'In' must have a value defined",rule="self.operator == 'In' ? size(self.values) != 0 : true"
// +kubebuilder:validation:XValidation:message="requirements operator 'Gt', 'Lt', 'Gte' or 'Lte' must have a single non-negative integer value",rule="(self.operator in ['Gt', 'Lt', 'Gte', 'Lte']) ? (size(self.values) == 1 && self.values[0].matches('^[0-9]+$')) : true"
// +kubebuilder:validation:XValidation:message="requirements with 'minValues' must have at least that many values specified in the 'values' field",rule="(self.operator == 'In' && has(self.minValues)) ? size(self.values) >= self.minValues : true"
// +kubebuilder:validation:XValidation:message="requirements with operator 'Exists' or 'DoesNotExist' must not have values",rule="(self.operator in ['Exists', 'DoesNotExist']) ? size(self.values) == 0 : true"
type NodeSelectorRequirementWithMinValues struct {
	// Key is the label key the requirement applies to.
	// +kubebuilder:validation:MaxLength=316
	// +kubebuilder:validation:Pattern=`^(([a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?)(\.([a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?))*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$`
	// +required
	Key string `json:"key"`
	// Operator relates the key to the values.
	// +kubebuilder:validation:Enum=In;NotIn;Exists;DoesNotExist;Gt;Lt;Gte;Lte
	// +required
	Operator corev1.NodeSelectorOperator `json:"operator"`
	// Values are the label values the operator uses.
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MaxLength=63
	// +listType=atomic
	// +optional
	Values []string `json:"values,omitempty"`
	// MinValues is the minimum number of distinct values of Key that the
	// instance types a NodeClaim keeps must cover.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=50
	// +optional
	MinValues *int `json:"minValues,omitempty"`
}

// NodeClassReference names the provider-specific class a NodeClaim is
// launched with.
type NodeClassReference struct {
	// Kind of the NodeClass, e.g. SimNodeClass or EC2NodeClass.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +required
	Kind string `json:"kind"`
	// Name of the NodeClass.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`
	// Group of the NodeClass, e.g. sim.capstan.dev or karpenter.k8s.aws.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[^/]*$`
	// +required
	Group string `json:"group"`
}
