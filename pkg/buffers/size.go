package buffers

import (
	"fmt"
	"math"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/utils/ptr"

	autoscalingv1beta1 "github.com/capstan-dev/capstan/api/autoscaling/v1beta1"
	"github.com/capstan-dev/capstan/pkg/state"
)

// Reasons of the ReadyForProvisioning condition: the reference's
// (pkg/controllers/capacitybuffer/constants.go, v1.14.1), and Capstan's
// for a strategy it does not provision.
const (
	ReasonResolved            = "Resolved"
	ReasonScalableRefNotFound = "ScalableRefNotFound"
	ReasonPodTemplateNotFound = "PodTemplateNotFound"
	ReasonResolutionFailed    = "ResolutionFailed"
	ReasonUnsupportedStrategy = "UnsupportedProvisioningStrategy"
)

// Source is what the shell read for a buffer's chunk.
type Source struct {
	// Template is the chunk's pod template: the PodTemplate's
	// (podTemplateRef) or the scalable object's (scalableRef). Nil when it
	// could not be read; Reason and Message say why.
	Template *corev1.PodTemplateSpec
	// TemplateGeneration is the PodTemplate's generation (podTemplateRef).
	TemplateGeneration int64
	// ScaleReplicas is the scalable object's spec.replicas as its scale
	// subresource reports it (scalableRef).
	ScaleReplicas int32
	// Reason (one of the Reason constants) and Message say why Template
	// is nil.
	Reason, Message string
}

// Input is one buffer to size, what was read for it and now (for the
// conditions' transition times).
type Input struct {
	Buffer *autoscalingv1beta1.CapacityBuffer
	Source Source
	Now    time.Time
}

// Sizing is a buffer's computed status and the virtual pods it keeps.
type Sizing struct {
	Status autoscalingv1beta1.CapacityBufferStatus
	Pods   []corev1.Pod
}

// Size computes a buffer's status and virtual pods. The status starts
// from the buffer's own, so conditions others set (Provisioning) stay and
// an unchanged condition keeps its transition time. Virtual pods come
// only from a buffer ReadyForProvisioning with replicas.
func Size(in Input) Sizing {
	cb := in.Buffer
	status := *cb.Status.DeepCopy()
	status.ProvisioningStrategy = cb.Spec.ProvisioningStrategy
	ready := func(s metav1.ConditionStatus, reason, message string) {
		setCondition(&status.Conditions, metav1.Condition{Type: autoscalingv1beta1.ConditionReadyForProvisioning, Status: s, Reason: reason, Message: message,
			ObservedGeneration: cb.Generation}, in.Now)
	}
	if strategy := ptr.Deref(cb.Spec.ProvisioningStrategy, autoscalingv1beta1.ActiveProvisioningStrategy); strategy != autoscalingv1beta1.ActiveProvisioningStrategy {
		ready(metav1.ConditionFalse, ReasonUnsupportedStrategy, fmt.Sprintf("provisioningStrategy %q is not one Capstan provisions (only %q)", strategy, autoscalingv1beta1.ActiveProvisioningStrategy))
		status.Replicas = nil
		return Sizing{Status: status}
	}
	src := in.Source
	switch {
	case cb.Spec.PodTemplateRef == nil && cb.Spec.ScalableRef == nil:
		src = Source{Reason: ReasonResolutionFailed, Message: "neither podTemplateRef nor scalableRef is set"}
	case src.Template == nil && src.Reason == "":
		src.Reason, src.Message = ReasonResolutionFailed, "the pod template was not read"
	}
	if src.Template == nil {
		ready(metav1.ConditionFalse, src.Reason, src.Message)
		status.Replicas = nil
		return Sizing{Status: status}
	}
	if cb.Spec.PodTemplateRef != nil {
		status.PodTemplateRef = &autoscalingv1beta1.LocalObjectRef{Name: cb.Spec.PodTemplateRef.Name}
		status.PodTemplateGeneration = ptr.To(src.TemplateGeneration)
	} else {
		status.PodTemplateRef, status.PodTemplateGeneration = nil, nil
	}
	status.Replicas = ptr.To(Replicas(cb, src))
	ready(metav1.ConditionTrue, ReasonResolved, "pod template resolved successfully")
	return Sizing{Status: status, Pods: VirtualPods(cb, status, src)}
}

// VirtualPods are the buffer's virtual pods for a status (Size's, or the
// one the capacitybuffer controller wrote): status.replicas copies of the
// source's template, none unless ReadyForProvisioning.
func VirtualPods(cb *autoscalingv1beta1.CapacityBuffer, status autoscalingv1beta1.CapacityBufferStatus, src Source) []corev1.Pod {
	if src.Template == nil || status.Replicas == nil || !meta.IsStatusConditionTrue(status.Conditions, autoscalingv1beta1.ConditionReadyForProvisioning) {
		return nil
	}
	template := sanitized(*src.Template)
	pods := make([]corev1.Pod, 0, *status.Replicas)
	for i := range int(*status.Replicas) {
		pods = append(pods, state.NewVirtualPod(state.KindCapacityBuffer, cb.Namespace, cb.Name, i, template))
	}
	return pods
}

// Replicas is how many chunks a buffer keeps: the larger of replicas and
// percentage's share of the scalable object (sig-autoscaling's v1beta1
// API and the reference's computeReplicas agree on the larger; the
// reference's own field comment says the smaller), capped by limits; with
// neither, as many chunks as limits hold. Percentage counts only with a
// scalableRef of positive replicas: rounded up, and at least 1.
func Replicas(cb *autoscalingv1beta1.CapacityBuffer, src Source) int32 {
	var candidates []int32
	if cb.Spec.Replicas != nil {
		candidates = append(candidates, *cb.Spec.Replicas)
	}
	if cb.Spec.Percentage != nil && cb.Spec.ScalableRef != nil && src.ScaleReplicas > 0 {
		candidates = append(candidates, percentOf(src.ScaleReplicas, *cb.Spec.Percentage))
	}
	desired := int32(0)
	if len(candidates) > 0 {
		desired = slices.Max(candidates)
	}
	if len(cb.Spec.Limits) == 0 || src.Template == nil {
		return desired
	}
	fit, ok := fitting(corev1.ResourceList(cb.Spec.Limits), src.Template)
	switch {
	case !ok:
		return desired
	case len(candidates) == 0:
		return fit
	}
	return min(desired, fit)
}

// percentOf is percentage of replicas rounded up, at least 1 when both
// are positive (the reference's calculatePercentageReplicas).
func percentOf(replicas, percentage int32) int32 {
	n := int32(math.Ceil(float64(replicas) * float64(percentage) / 100))
	if n < 1 && percentage > 0 {
		n = 1
	}
	return n
}

// fitting is how many chunks of template fit limits: for each resource
// both name (and the chunk requests some of), the whole chunks its limit
// holds; the fewest. False when no resource is in both: the limits do not
// bound the chunk (the reference's calculateLimitReplicas).
func fitting(limits corev1.ResourceList, template *corev1.PodTemplateSpec) (int32, bool) {
	requests := resourcehelper.PodRequests(&corev1.Pod{Spec: template.Spec}, resourcehelper.PodResourcesOptions{})
	fit, matched := int64(math.MaxInt32), false
	for name, limit := range limits {
		request, ok := requests[name]
		if !ok || request.IsZero() {
			continue
		}
		matched = true
		fit = min(fit, limit.MilliValue()/request.MilliValue())
	}
	return int32(max(fit, 0)), matched
}

// sanitized is the template without what a pod that never exists cannot
// have: claims (persistentVolumeClaim and ephemeral volumes, and their
// mounts) would never be found, and a nodeName would bind it (the
// reference's sanitizeVirtualPodSpec).
func sanitized(t corev1.PodTemplateSpec) corev1.PodTemplateSpec {
	t = *t.DeepCopy()
	t.Spec.NodeName = ""
	dropped := map[string]bool{}
	t.Spec.Volumes = slices.DeleteFunc(t.Spec.Volumes, func(v corev1.Volume) bool {
		dropped[v.Name] = v.PersistentVolumeClaim != nil || v.Ephemeral != nil
		return dropped[v.Name]
	})
	unmount := func(cs []corev1.Container) {
		for i := range cs {
			cs[i].VolumeMounts = slices.DeleteFunc(cs[i].VolumeMounts, func(m corev1.VolumeMount) bool { return dropped[m.Name] })
		}
	}
	unmount(t.Spec.Containers)
	unmount(t.Spec.InitContainers)
	return t
}

// setCondition sets c, its transition time now if its status changed.
func setCondition(conds *[]metav1.Condition, c metav1.Condition, now time.Time) {
	c.LastTransitionTime = metav1.NewTime(now)
	meta.SetStatusCondition(conds, c)
}
