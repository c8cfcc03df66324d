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
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.nodes
// +kubebuilder:printcolumn:name="NodeClass",type="string",JSONPath=".spec.template.spec.nodeClassRef.name",description="The NodeClass nodes are launched with"
// +kubebuilder:printcolumn:name="Nodes",type="string",JSONPath=".status.nodes",description="Nodes the NodePool owns"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="Weight",type="integer",JSONPath=".spec.weight",priority=1,description="Higher weights are tried first"
// +kubebuilder:printcolumn:name="CPU",type="string",JSONPath=".status.resources.cpu",priority=1,description="CPU of the NodePool's nodes"
// +kubebuilder:printcolumn:name="Memory",type="string",JSONPath=".status.resources.memory",priority=1,description="Memory of the NodePool's nodes"
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
//
// Static NodePools (replicas set; the reference's
// pkg/apis/v1/nodepool.go, v1.8; docs/static.md):
// +kubebuilder:validation:XValidation:rule="has(self.replicas) == has(oldSelf.replicas)",message="Cannot transition NodePool between static (replicas set) and dynamic (replicas unset) provisioning modes"
// +kubebuilder:validation:XValidation:rule="!has(self.replicas) || (!has(self.limits) || size(self.limits) == 0 || (size(self.limits) == 1 && 'nodes' in self.limits))",message="only 'limits.nodes' is supported on static NodePools"
// +kubebuilder:validation:XValidation:rule="!has(self.replicas) || !has(self.weight)",message="'weight' is not supported on static NodePools"
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
	// Replicas makes the NodePool static: it keeps this many nodes whatever
	// the pods ask, never consolidated, within limits.nodes (its only
	// limit); weight is not supported, and a NodePool cannot switch between
	// static and dynamic. `kubectl scale nodepool` sets it.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Replicas *int64 `json:"replicas,omitempty"`
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
	// +kubebuilder:validation:XValidation:message="label domain \"karpenter.sh\" is restricted: only karpenter.sh/capacity-type and karpenter.sh/do-not-sync-taints may be set",rule="self.all(k, k in ['karpenter.sh/capacity-type', 'karpenter.sh/nodepool', 'karpenter.sh/do-not-sync-taints'] || !k.find('^[^/]+').endsWith('karpenter.sh'))"
	// +kubebuilder:validation:XValidation:message="label \"karpenter.sh/nodepool\" is restricted",rule="self.all(k, k != 'karpenter.sh/nodepool')"
	// +kubebuilder:validation:XValidation:message="label \"kubernetes.io/hostname\" is restricted",rule="self.all(k, k != 'kubernetes.io/hostname')"
	// +mapType=atomic
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// Annotations are added to every node.
	// +mapType=granular
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// NodeClaimTemplateSpec is the part of a NodeClaim's spec a NodePool
// templates.
type NodeClaimTemplateSpec struct {
	// Taints are applied to every node.
	// +kubebuilder:validation:MaxItems=50
	// +listType=atomic
	// +optional
	Taints []corev1.Taint `json:"taints,omitempty"`
	// StartupTaints are expected to be removed by some agent on the node;
	// pods need not tolerate them to be provisioned for.
	// +kubebuilder:validation:MaxItems=50
	// +listType=atomic
	// +optional
	StartupTaints []corev1.Taint `json:"startupTaints,omitempty"`
	// Requirements constrain the nodes launched (instance type, zone,
	// capacity type, architecture …). An empty list allows every capacity
	// type, tried reserved, then spot, then on-demand.
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:XValidation:message="label domain \"karpenter.sh\" is restricted: only karpenter.sh/capacity-type may be required",rule="self.all(r, r.key in ['karpenter.sh/capacity-type', 'karpenter.sh/nodepool'] || !r.key.find('^[^/]+').endsWith('karpenter.sh'))"
	// +kubebuilder:validation:XValidation:message="label \"karpenter.sh/nodepool\" is restricted",rule="self.all(r, r.key != 'karpenter.sh/nodepool')"
	// +kubebuilder:validation:XValidation:message="label \"kubernetes.io/hostname\" is restricted: a NodePool cannot choose node names",rule="self.all(r, r.key != 'kubernetes.io/hostname')"
	// +listType=atomic
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
// +kubebuilder:validation:Enum=WhenEmpty;WhenEmptyOrUnderutilized;Balanced
type ConsolidationPolicy string

// Consolidation policies. Balanced (the reference's v1.14) consolidates
// what WhenEmptyOrUnderutilized does but takes a move only when its
// savings are worth its disruption (docs/disruption.md, "Balanced
// consolidation").
const (
	ConsolidationPolicyWhenEmpty                = ConsolidationPolicy("WhenEmpty")
	ConsolidationPolicyWhenEmptyOrUnderutilized = ConsolidationPolicy("WhenEmptyOrUnderutilized")
	ConsolidationPolicyBalanced                 = ConsolidationPolicy("Balanced")
)

// Disruption is how Capstan may voluntarily remove a NodePool's nodes.
type Disruption struct {
	// ConsolidateAfter is how long after a pod was added to or removed from
	// a node it becomes consolidatable, or Never.
	// +kubebuilder:default="0s"
	// +optional
	ConsolidateAfter NillableDuration `json:"consolidateAfter,omitzero"`
	// ConsolidationPolicy is which nodes consolidation considers:
	// WhenEmpty, WhenEmptyOrUnderutilized or Balanced.
	// +kubebuilder:default=WhenEmptyOrUnderutilized
	// +optional
	ConsolidationPolicy ConsolidationPolicy `json:"consolidationPolicy,omitempty"`
	// Budgets limit how many nodes may be disrupted at once; the most
	// restrictive active budget wins.
	// +kubebuilder:default={{nodes: "10%"}}
	// +kubebuilder:validation:MaxItems=50
	// +kubebuilder:validation:XValidation:message="'schedule' must be set with 'duration'",rule="self.all(x, has(x.schedule) == has(x.duration))"
	// +listType=atomic
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
type Budget struct {
	// Reasons the budget applies to; none means all.
	// +kubebuilder:validation:MaxItems=50
	// +listType=set
	// +optional
	Reasons []DisruptionReason `json:"reasons,omitempty"`
	// Nodes is a count ("5") or a percentage ("10%") of the NodePool's nodes.
	// +kubebuilder:validation:Pattern=`^((100|[0-9]{1,2})%|[0-9]+)$`
	// +kubebuilder:default="10%"
	// +required
	Nodes string `json:"nodes"`
	// Schedule is a cron expression (or @daily, @hourly …) at which the
	// budget's window opens; UTC unless capstan.dev/budget-timezone names a
	// zone.
	// +kubebuilder:validation:Pattern=`^(@(annually|yearly|monthly|weekly|daily|midnight|hourly))|((.+)\s(.+)\s(.+)\s(.+)\s(.+))$`
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
	// Nodes is the count of the NodePool's nodes, static or dynamic (the
	// scale subresource's status replicas).
	// +kubebuilder:default=0
	// +optional
	Nodes *int64 `json:"nodes,omitempty"`
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

// Static reports whether the NodePool is static (spec.replicas set): it
// keeps a fixed number of nodes, launched whatever the pods ask and never
// consolidated (docs/static.md).
func (np *NodePool) Static() bool { return np.Spec.Replicas != nil }
