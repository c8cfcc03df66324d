package effects

import (
	"fmt"
	"maps"
	"slices"

	autoscalingv1 "k8s.io/autoscaler/cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// The functions below change an object in memory as an effect says. Both
// appliers call them — the API applier on the object it then patches, the
// simulator's on its world's object — so an effect means the same thing
// in both by construction.

// MergeInto merges the effect's labels and annotations into o and adds
// the finalizers it lacks.
func MergeInto(o metav1.Object, e MergeMetadata) {
	if len(e.Labels) > 0 {
		labels := o.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		maps.Copy(labels, e.Labels)
		o.SetLabels(labels)
	}
	if len(e.Annotations) > 0 {
		annotations := o.GetAnnotations()
		if annotations == nil {
			annotations = map[string]string{}
		}
		maps.Copy(annotations, e.Annotations)
		o.SetAnnotations(annotations)
	}
	for _, f := range e.Finalizers {
		if !slices.Contains(o.GetFinalizers(), f) {
			o.SetFinalizers(append(o.GetFinalizers(), f))
		}
	}
}

// RemoveLabelsFrom removes the labels with keys from o.
func RemoveLabelsFrom(o metav1.Object, keys []string) {
	labels := o.GetLabels()
	for _, k := range keys {
		delete(labels, k)
	}
	o.SetLabels(labels)
}

// RemoveFinalizerFrom removes a finalizer from o.
func RemoveFinalizerFrom(o metav1.Object, finalizer string) {
	o.SetFinalizers(slices.DeleteFunc(slices.Clone(o.GetFinalizers()), func(f string) bool { return f == finalizer }))
}

// SetStatusInto sets the effect's non-empty status fields on nc.
func SetStatusInto(nc *v1.NodeClaim, e SetNodeClaimStatus) {
	if e.ProviderID != "" {
		nc.Status.ProviderID = e.ProviderID
	}
	if e.ImageID != "" {
		nc.Status.ImageID = e.ImageID
	}
	if e.NodeName != "" {
		nc.Status.NodeName = e.NodeName
	}
	if e.Capacity != nil {
		nc.Status.Capacity = e.Capacity.DeepCopy()
	}
	if e.Allocatable != nil {
		nc.Status.Allocatable = e.Allocatable.DeepCopy()
	}
	if e.LastPodEventTime != nil {
		nc.Status.LastPodEventTime = *e.LastPodEventTime
	}
}

// PatchNodeInto merges the labels, adds the missing taints and
// finalizers and removes the taints (by key and effect) the effect names.
func PatchNodeInto(node *corev1.Node, e PatchNode) {
	MergeInto(node, MergeMetadata{Labels: e.Labels, Finalizers: e.Finalizers})
	for _, rm := range e.RemoveTaints {
		node.Spec.Taints = slices.DeleteFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.MatchTaint(&rm) })
	}
	for _, add := range e.AddTaints {
		if !slices.ContainsFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.MatchTaint(&add) }) {
			node.Spec.Taints = append(node.Spec.Taints, add)
		}
	}
}

// Conditions are the status conditions of a NodeClaim or NodePool, the
// kinds SetCondition and RemoveCondition name; an error for another.
func Conditions(o any) (*[]metav1.Condition, error) {
	switch o := o.(type) {
	case *v1.NodeClaim:
		return &o.Status.Conditions, nil
	case *v1.NodePool:
		return &o.Status.Conditions, nil
	case *autoscalingv1.ProvisioningRequest:
		return &o.Status.Conditions, nil
	}
	return nil, fmt.Errorf("%T has no conditions an effect sets", o)
}

// SetConditionInto sets or removes (remove) a condition of o.
func SetConditionInto(o any, c metav1.Condition, remove bool) error {
	conds, err := Conditions(o)
	if err != nil {
		return err
	}
	if remove {
		meta.RemoveStatusCondition(conds, c.Type)
		return nil
	}
	meta.SetStatusCondition(conds, c)
	return nil
}

// RefusedEvictions are the pods whose eviction a PodDisruptionBudget
// refused: an applier evicts every other pod and then returns this, so
// the step backs off.
type RefusedEvictions struct{ Pods []string }

func (e *RefusedEvictions) Error() string {
	return fmt.Sprintf("evictions refused by disruption budgets: %v", e.Pods)
}
