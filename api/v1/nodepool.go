package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodePool describes the nodes Capstan may launch for pending pods and how
// it may later disrupt them.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=nodepools,scope=Cluster,categories=karpenter,shortName={np,nps}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="NodeClass",type="string",JSONPath=".spec.template.spec.nodeClassRef.name",description="The NodeClass nodes are launched with"
// +kubebuilder:printcolumn:name="Nodes",type="string",JSONPath=".status.resources.nodes",description="Nodes the NodePool owns"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status"
// +kubebuilder:printcolumn:name="Weight",type="integer",JSONPath=".spec.weight",description="Higher weights are tried first"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type NodePool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec NodePoolSpec `json:"spec"`
	// +optional
	Status NodePoolStatus `json:"status,omitempty"`
}

// NodePoolList is a list of NodePools.
//
// +kubebuilder:object:root=true
type NodePoolList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NodePool `json:"items"`
}

// NodePoolSpec is the desired shape and behaviour of a NodePool's nodes.
type NodePoolSpec struct {
	// Template is the NodeClaim every node of this NodePool starts from.
	// +required
	Template NodeClaimTemplate `json:"template"`
	// Disruption controls how Capstan may voluntarily remove nodes.
	// +kubebuilder:default={consolidateAfter: "0s"}
	// +optional
	Disruption Disruption `json:"disruption"`
	// Limits caps the total resources of the NodePool's nodes (cpu, memory,
	// nvidia.com/gpu, nodes …). Provisioning stops at a limit.
	// +optional
	Limits Limits `json:"limits,omitempty"`
	// Weight orders NodePools: higher weights are tried first.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +optional
	Weight *int32 `json:"weight,omitempty"`
}

// Limits are resource ceilings for a NodePool.
type Limits corev1.ResourceList

// NodeClaimTemplate is the metadata and spec stamped on each NodeClaim.
//
// +kubebuilder:validation:XValidation:message="a NodePool for control-plane nodes (label or taint node-role.kubernetes.io/control-plane) must not allow spot capacity: require karpenter.sh/capacity-type In [on-demand, reserved] or NotIn [spot]",rule="!((has(self.metadata) && has(self.metadata.labels) && 'node-role.kubernetes.io/control-plane' in self.metadata.labels) || (has(self.spec.taints) && self.spec.taints.exists(t, t.key == 'node-role.kubernetes.io/control-plane'))) || self.spec.requirements.exists(r, r.key == 'karpenter.sh/capacity-type' && ((r.operator == 'In' && has(r.values) && !('spot' in r.values)) || (r.operator == 'NotIn' && has(r.values) && 'spot' in r.values) || r.operator == 'DoesNotExist'))"
type NodeClaimTemplate struct {
	// +optional
	ObjectMeta TemplateMetadata `json:"metadata,omitempty"`
	// +required
	Spec NodeClaimTemplateSpec `json:"spec"`
}

// TemplateMetadata is the subset of object metadata a template may set.
type TemplateMetadata struct {
	// Labels are added to every node. The karpenter.sh domain and
	// kubernetes.io/hostname are Capstan's to set.
	// +kubebuilder:validation:MaxProperties=100
	// +kubebuilder:validation:XValidation:message="label domain \"karpenter.sh\" is restricted: only karpenter.sh/capacity-type and karpenter.sh/do-not-sync-taints may be set",rule="self.all(k, k in ['karpenter.sh/capacity-type', 'karpenter.sh/do-not-sync-taints'] || !k.find('^[^/]+').endsWith('karpenter.sh'))"
	// +kubebuilder:validation:XValidation:message="label \"kubernetes.io/hostname\" is restricted",rule="self.all(k, k != 'kubernetes.io/hostname')"
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// Annotations are added to every node.
	// +kubebuilder:validation:MaxProperties=100
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// NodeClaimTemplateSpec is the part of a NodeClaim's spec a NodePool
// templates.
type NodeClaimTemplateSpec struct {
	// Taints are applied to every node.
	// +kubebuilder:validation:MaxItems=50
	// +optional
	Taints []corev1.Taint `json:"taints,omitempty"`
	// StartupTaints are expected to be removed by some agent on the node;
	// pods need not tolerate them to be provisioned for.
	// +kubebuilder:validation:MaxItems=50
	// +optional
	StartupTaints []corev1.Taint `json:"startupTaints,omitempty"`
	// Requirements constrain the nodes launched (instance type, zone,
	// capacity type, architecture …). An empty list allows every capacity
	// type, tried reserved, then spot, then on-demand.
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:XValidation:message="label domain \"karpenter.sh\" is restricted: only karpenter.sh/capacity-type may be required",rule="self.all(r, r.key == 'karpenter.sh/capacity-type' || !r.key.find('^[^/]+').endsWith('karpenter.sh'))"
	// +kubebuilder:validation:XValidation:message="label domain \"kubernetes.io\" is restricted: only the well-known labels (topology.kubernetes.io/zone, topology.kubernetes.io/region, node.kubernetes.io/instance-type, kubernetes.io/arch, kubernetes.io/os, their beta forms) and the node.kubernetes.io and node-restriction.kubernetes.io domains may be required",rule="self.all(r, r.key in ['beta.kubernetes.io/instance-type', 'failure-domain.beta.kubernetes.io/region', 'beta.kubernetes.io/os', 'beta.kubernetes.io/arch', 'failure-domain.beta.kubernetes.io/zone', 'topology.kubernetes.io/zone', 'topology.kubernetes.io/region', 'node.kubernetes.io/instance-type', 'kubernetes.io/arch', 'kubernetes.io/os', 'node.kubernetes.io/windows-build'] || r.key.find('^[^/]+').endsWith('node.kubernetes.io') || r.key.find('^[^/]+').endsWith('node-restriction.kubernetes.io') || !r.key.find('^[^/]+').endsWith('kubernetes.io'))"
	// +kubebuilder:validation:XValidation:message="label domain \"k8s.io\" is restricted: only the kops.k8s.io domain may be required",rule="self.all(r, r.key.find('^[^/]+').endsWith('kops.k8s.io') || !r.key.find('^[^/]+').endsWith('k8s.io'))"
	// +kubebuilder:validation:XValidation:message="label \"kubernetes.io/hostname\" is restricted: a NodePool cannot choose node names",rule="self.all(r, r.key != 'kubernetes.io/hostname')"
	// +required
	Requirements []NodeSelectorRequirementWithMinValues `json:"requirements"`
	// NodeClassRef names the provider-specific NodeClass.
	// +kubebuilder:validation:XValidation:rule="self.group == oldSelf.group",message="nodeClassRef.group is immutable"
	// +kubebuilder:validation:XValidation:rule="self.kind == oldSelf.kind",message="nodeClassRef.kind is immutable"
	// +required
	NodeClassRef *NodeClassReference `json:"nodeClassRef"`
	// ExpireAfter is how long a node lives before it is replaced, or Never.
	// +kubebuilder:default="720h"
	// +optional
	ExpireAfter NillableDuration `json:"expireAfter,omitzero"`
	// TerminationGracePeriod bounds how long a node may drain; at the end
	// remaining pods are deleted regardless of PDBs and do-not-disrupt.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(s|m|h))+$`
	// +optional
	TerminationGracePeriod *metav1.Duration `json:"terminationGracePeriod,omitempty"`
}

// ConsolidationPolicy says which nodes consolidation may remove.
// +kubebuilder:validation:Enum=WhenEmpty;WhenEmptyOrUnderutilized
type ConsolidationPolicy string

// Consolidation policies.
const (
	ConsolidationPolicyWhenEmpty                = ConsolidationPolicy("WhenEmpty")
	ConsolidationPolicyWhenEmptyOrUnderutilized = ConsolidationPolicy("WhenEmptyOrUnderutilized")
)

// Disruption is how Capstan may voluntarily remove a NodePool's nodes.
type Disruption struct {
	// ConsolidateAfter is how long after a pod was added to or removed from
	// a node it becomes consolidatable, or Never.
	// +kubebuilder:default="0s"
	// +optional
	ConsolidateAfter NillableDuration `json:"consolidateAfter,omitzero"`
	// ConsolidationPolicy is which nodes consolidation considers.
	// +kubebuilder:default=WhenEmptyOrUnderutilized
	// +optional
	ConsolidationPolicy ConsolidationPolicy `json:"consolidationPolicy,omitempty"`
	// Budgets limit how many nodes may be disrupted at once; the most
	// restrictive active budget wins.
	// +kubebuilder:default={{nodes: "10%"}}
	// +kubebuilder:validation:MaxItems=50
	// +optional
	Budgets []Budget `json:"budgets,omitempty"`
}

// DisruptionReason is a voluntary disruption method a budget can limit.
// +kubebuilder:validation:Enum=Underutilized;Empty;Drifted
type DisruptionReason string

// Disruption reasons.
const (
	DisruptionReasonUnderutilized = DisruptionReason("Underutilized")
	DisruptionReasonEmpty         = DisruptionReason("Empty")
	DisruptionReasonDrifted       = DisruptionReason("Drifted")
	// Expired and Interrupted are forceful: no budget limits them, so a
	// budget cannot name them; node records, events and metrics do.
	DisruptionReasonExpired     = DisruptionReason("Expired")
	DisruptionReasonInterrupted = DisruptionReason("Interrupted")
	// Unhealthy is node repair's: its own budget (the NodePool's
	// capstan.dev/repair-budget) limits it, not a budget's reasons.
	DisruptionReasonUnhealthy = DisruptionReason("Unhealthy")
)

// Budget limits voluntary disruption, always or during a schedule window.
//
// +kubebuilder:validation:XValidation:message="'schedule' must be set with 'duration'",rule="has(self.schedule) == has(self.duration)"
type Budget struct {
	// Reasons the budget applies to; none means all.
	// +kubebuilder:validation:MaxItems=3
	// +listType=set
	// +optional
	Reasons []DisruptionReason `json:"reasons,omitempty"`
	// Nodes is a count ("5") or a percentage ("10%") of the NodePool's nodes.
	// +kubebuilder:validation:Pattern=`^((100|[0-9]{1,2})%|[0-9]+)$`
	// +kubebuilder:validation:MaxLength=16
	// +kubebuilder:default="10%"
	// +optional
	Nodes string `json:"nodes"`
	// Schedule is a cron expression (or @daily, @hourly …) at which the
	// budget's window opens; UTC unless capstan.dev/budget-timezone names a
	// zone.
	// +kubebuilder:validation:Pattern=`^(@(annually|yearly|monthly|weekly|daily|midnight|hourly))|((.+)\s(.+)\s(.+)\s(.+)\s(.+))$`
	// +kubebuilder:validation:MaxLength=128
	// +optional
	Schedule *string `json:"schedule,omitempty"`
	// Duration is how long the window stays open, in hours and minutes
	// ("10h5m", "30m").
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$`
	// +optional
	Duration *metav1.Duration `json:"duration,omitempty"`
}

// NodePoolStatus is the observed state of a NodePool.
type NodePoolStatus struct {
	// Resources is the total of the NodePool's nodes' capacity, and
	// "nodes", their count.
	// +optional
	Resources corev1.ResourceList `json:"resources,omitempty"`
	// Conditions: Ready, NodeClassReady, ValidationSucceeded.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// NodePool condition types.
const (
	ConditionTypeReady               = "Ready"
	ConditionTypeNodeClassReady      = "NodeClassReady"
	ConditionTypeValidationSucceeded = "ValidationSucceeded"
)
