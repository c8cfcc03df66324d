package v1

import corev1 "k8s.io/api/core/v1"

// NodeSelectorRequirementWithMinValues is a node selector requirement with
// an optional minimum number of distinct values a launch must keep open
// (for example at least 5 instance types for spot flexibility).
//
// Every rule is total: values is optional (Exists and DoesNotExist are
// usually written without it), so each reads it only behind has().
//
// +kubebuilder:validation:XValidation:message="requirements with operator 'In' must have a value defined",rule="self.operator == 'In' ? (has(self.values) && size(self.values) != 0) : true"
// +kubebuilder:validation:XValidation:message="requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer value",rule="(self.operator in ['Gt', 'Lt', 'Gte', 'Lte']) ? (has(self.values) && size(self.values) == 1 && self.values[0].matches('^[0-9]+$') && (size(self.values[0].find('[1-9][0-9]*$')) < 19 || (size(self.values[0].find('[1-9][0-9]*$')) == 19 && self.values[0].find('[1-9][0-9]*$') <= '9223372036854775807'))) : true"
// +kubebuilder:validation:XValidation:message="requirements with 'minValues' must have at least that many values specified in the 'values' field",rule="(self.operator == 'In' && has(self.minValues)) ? (has(self.values) && size(self.values) >= self.minValues) : true"
// +kubebuilder:validation:XValidation:message="requirements with operator 'Exists' or 'DoesNotExist' must not have values",rule="(self.operator in ['Exists', 'DoesNotExist']) ? (!has(self.values) || size(self.values) == 0) : true"
type NodeSelectorRequirementWithMinValues struct {
	// Key is the label key the requirement applies to.
	// +kubebuilder:validation:MaxLength=316
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(\/))?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`
	// +required
	Key string `json:"key"`
	// Operator relates the key to the values.
	// +kubebuilder:validation:Enum=Gte;Lte;In;NotIn;Exists;DoesNotExist;Gt;Lt
	// +required
	Operator corev1.NodeSelectorOperator `json:"operator"`
	// Values are the label values the operator uses.
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:items:Pattern=`^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`
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
	// +kubebuilder:validation:XValidation:rule="self != ''",message="kind may not be empty"
	// +required
	Kind string `json:"kind"`
	// Name of the NodeClass.
	// +kubebuilder:validation:XValidation:rule="self != ''",message="name may not be empty"
	// +required
	Name string `json:"name"`
	// Group of the NodeClass, e.g. sim.capstan.dev or karpenter.k8s.aws.
	// +kubebuilder:validation:XValidation:rule="self != ''",message="group may not be empty"
	// +kubebuilder:validation:Pattern=`^[^/]*$`
	// +required
	Group string `json:"group"`
}
