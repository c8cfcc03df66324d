package nodepool

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/admission"
	"github.com/capstan-dev/capstan/pkg/effects"
	"github.com/capstan-dev/capstan/pkg/provisioning"
)

// ResourceNodes is the status.resources entry counting a NodePool's nodes,
// the same name NodePool limits use.
const ResourceNodes = provisioning.ResourceNodes

// Condition reasons. A True condition's reason is its type;
// ValidationSucceeded's are pkg/admission's.
const (
	ReasonNodeClassNotFound    = "NodeClassNotFound"
	ReasonNodeClassNotReady    = "NodeClassNotReady"
	ReasonUnsupportedNodeClass = "UnsupportedNodeClass"
)

// Input is what the reconciler gathers about one NodePool.
type Input struct {
	NodePool *v1.NodePool
	// NodeClaims are the NodeClaims labelled karpenter.sh/nodepool with
	// the NodePool's name.
	NodeClaims []v1.NodeClaim
	// Supported are the NodeClass kinds the cloud provider serves
	// (CloudProvider.GetSupportedNodeClasses).
	Supported []schema.GroupVersionKind
	// NodeClass is the referenced NodeClass; nil when it does not exist,
	// or when the reference is to a kind the provider does not serve (then
	// it is not looked up).
	NodeClass *NodeClass
}

// NodeClass is what a NodePool's status needs of its NodeClass, of any
// kind: whether it is being deleted, and its Ready condition (nil when it
// has none yet).
type NodeClass struct {
	Deleting bool
	Ready    *metav1.Condition
}

// Decision is what the reconciler writes back.
type Decision struct {
	// Annotations are the hash annotations the NodePool must carry, in
	// addition to the ones it has.
	Annotations map[string]string
	// Status is the NodePool's whole new status.
	Status v1.NodePoolStatus
}

// Effects are what d changes on np: the hash annotations it lacks, a
// warning event for each failure that began, and the status when it
// changed.
func (d Decision) Effects(np *v1.NodePool) []effects.Effect {
	var out []effects.Effect
	ref := effects.NodePoolRef(np.Name)
	if !hasAnnotations(np.Annotations, d.Annotations) {
		out = append(out, effects.MergeMetadata{Object: ref, Annotations: d.Annotations})
	}
	for _, ev := range FailureEvents(np.Status.Conditions, d.Status.Conditions) {
		out = append(out, effects.Event{Object: ref, Type: corev1.EventTypeWarning, Reason: ev.Reason, Action: "Provision", Message: ev.Message})
	}
	if !equality.Semantic.DeepEqual(np.Status, d.Status) {
		out = append(out, effects.SetNodePoolStatus{Name: np.Name, Status: d.Status})
	}
	return out
}

// hasAnnotations reports whether have carries every entry of want.
func hasAnnotations(have, want map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// Step decides the NodePool's hash annotations and status at now. A
// condition whose status did not change keeps its LastTransitionTime;
// every condition gets the NodePool's generation as ObservedGeneration.
// Step reads no clock and mutates none of its inputs.
func Step(in Input, now time.Time) Decision {
	np := in.NodePool
	status := *np.Status.DeepCopy()
	status.Resources = Resources(in.NodeClaims)
	// status.nodes, the scale subresource's status replicas, counts the
	// nodes of every NodePool, static or dynamic, as the reference's
	// pkg/controllers/nodepool/counter does.
	status.Nodes = ptr.To(int64(len(in.NodeClaims)))
	validation := admission.ValidationSucceeded(np)
	nodeClass := NodeClassReady(np.Spec.Template.Spec.NodeClassRef, in.Supported, in.NodeClass)
	for _, c := range []metav1.Condition{validation, nodeClass, admission.NodePoolReady(validation, nodeClass)} {
		c.ObservedGeneration = np.Generation
		c.LastTransitionTime = metav1.NewTime(now)
		meta.SetStatusCondition(&status.Conditions, c)
	}
	return Decision{Annotations: HashAnnotations(np), Status: status}
}

// HashAnnotations are the NodePool's static hash and its version
// (decision 13), which the provisioner copies onto NodeClaims and drift
// compares.
func HashAnnotations(np *v1.NodePool) map[string]string {
	return map[string]string{
		v1.NodePoolHashAnnotationKey:        np.Hash(),
		v1.NodePoolHashVersionAnnotationKey: v1.NodePoolHashVersion,
	}
}

// Resources totals the capacity of the NodeClaims and counts them as
// "nodes". NodeClaims not launched yet have no capacity but still count
// as nodes, as they do against the NodePool's limits.
func Resources(nodeClaims []v1.NodeClaim) corev1.ResourceList {
	total := corev1.ResourceList{}
	for i := range nodeClaims {
		for name, q := range nodeClaims[i].Status.Capacity {
			sum := total[name]
			sum.Add(q)
			total[name] = sum
		}
	}
	total[ResourceNodes] = *resource.NewQuantity(int64(len(nodeClaims)), resource.DecimalSI)
	return total
}

// SupportedKind is the kind of supported that ref names, with its
// version; false when ref is nil or names a kind the provider does not
// serve.
func SupportedKind(ref *v1.NodeClassReference, supported []schema.GroupVersionKind) (schema.GroupVersionKind, bool) {
	if ref == nil {
		return schema.GroupVersionKind{}, false
	}
	for _, gvk := range supported {
		if gvk.Group == ref.Group && gvk.Kind == ref.Kind {
			return gvk, true
		}
	}
	return schema.GroupVersionKind{}, false
}

// NodeClassReady is True when ref names a supported NodeClass that exists
// (nc non-nil), is not being deleted and whose Ready condition is True;
// False when it is missing or not ready, or when ref names a kind the
// provider does not serve: nothing is launched from such a NodePool.
func NodeClassReady(ref *v1.NodeClassReference, supported []schema.GroupVersionKind, nc *NodeClass) metav1.Condition {
	cond := metav1.Condition{Type: v1.ConditionTypeNodeClassReady, Status: metav1.ConditionFalse}
	_, ok := SupportedKind(ref, supported)
	switch {
	case ref == nil:
		cond.Reason, cond.Message = ReasonUnsupportedNodeClass, "spec.template.spec.nodeClassRef is not set"
	case !ok:
		kinds := make([]string, len(supported))
		for i, gvk := range supported {
			kinds[i] = gvk.Kind + " " + gvk.Group
		}
		cond.Reason = ReasonUnsupportedNodeClass
		cond.Message = fmt.Sprintf("nodeClassRef %s %s/%s is not supported; only %s: no nodes are launched from this NodePool", ref.Kind, ref.Group, ref.Name, strings.Join(kinds, " or "))
	case nc == nil:
		cond.Reason, cond.Message = ReasonNodeClassNotFound, fmt.Sprintf("%s %q not found: no nodes are launched from this NodePool until it exists", ref.Kind, ref.Name)
	case nc.Deleting:
		cond.Reason, cond.Message = ReasonNodeClassNotReady, fmt.Sprintf("%s %q is being deleted", ref.Kind, ref.Name)
	case nc.Ready == nil:
		cond.Reason, cond.Message = ReasonNodeClassNotReady, fmt.Sprintf("%s %q has no Ready condition yet", ref.Kind, ref.Name)
	case nc.Ready.Status != metav1.ConditionTrue:
		cond.Reason = ReasonNodeClassNotReady
		cond.Message = fmt.Sprintf("%s %q is not ready (%s): %s", ref.Kind, ref.Name, nc.Ready.Reason, nc.Ready.Message)
	default:
		cond.Status, cond.Reason = metav1.ConditionTrue, v1.ConditionTypeNodeClassReady
	}
	return cond
}

// References reports whether np's template references the NodeClass of
// kind gk called name.
func References(np *v1.NodePool, gk schema.GroupKind, name string) bool {
	ref := np.Spec.Template.Spec.NodeClassRef
	return ref != nil && ref.Group == gk.Group && ref.Kind == gk.Kind && ref.Name == name
}

// FailureEvents are the warnings to record when a NodePool's
// NodeClassReady or ValidationSucceeded condition turns False or changes
// reason while False (from old to new conditions): once per change, so a
// NodePool left broken is not spammed. An annotation with a value Capstan
// does not know is so rejected with an event and the condition (decision
// 17).
func FailureEvents(old, new []metav1.Condition) []metav1.Condition {
	var out []metav1.Condition
	for _, t := range []string{v1.ConditionTypeNodeClassReady, v1.ConditionTypeValidationSucceeded} {
		now := meta.FindStatusCondition(new, t)
		if now == nil || now.Status != metav1.ConditionFalse {
			continue
		}
		if was := meta.FindStatusCondition(old, t); was != nil && was.Status == now.Status && was.Reason == now.Reason {
			continue
		}
		out = append(out, *now)
	}
	return out
}
