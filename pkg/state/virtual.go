package state

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// VirtualPodAnnotationKey marks a virtual pod: one that exists only to
// hold capacity for the object it names, "<Kind>/<namespace>/<name>"
// (VirtualPodFor). Virtual pods are solved like pending pods but never
// written to the API server, nominated or bound (docs/batch.md,
// "Capacity buffers").
const VirtualPodAnnotationKey = "capstan.dev/virtual-pod-for"

// KindCapacityBuffer is the kind whose virtual pods yield (Yields).
const KindCapacityBuffer = "CapacityBuffer"

// VirtualPodFor is the annotation value naming the object a virtual pod
// holds capacity for.
func VirtualPodFor(kind, namespace, name string) string {
	return kind + "/" + namespace + "/" + name
}

// IsVirtual reports whether a pod is a virtual pod.
func IsVirtual(p *corev1.Pod) bool {
	_, ok := p.Annotations[VirtualPodAnnotationKey]
	return ok
}

// VirtualOwner is the kind, namespace and name of the object a virtual
// pod holds capacity for; false for a real pod or a malformed value.
func VirtualOwner(p *corev1.Pod) (kind, namespace, name string, ok bool) {
	v, found := p.Annotations[VirtualPodAnnotationKey]
	if !found {
		return "", "", "", false
	}
	parts := strings.SplitN(v, "/", 3)
	if len(parts) != 3 || parts[0] == "" || parts[2] == "" {
		return "", "", "", false
	}
	return parts[0], parts[1], parts[2], true
}

// Yields reports whether a virtual pod gives its capacity to real pods:
// a CapacityBuffer's does (it keeps capacity warm for them, and is
// refilled after), every other kind's holds it (a ProvisioningRequest's
// booked capacity is its own pods'), so a kind added later keeps what it
// booked unless it says otherwise here.
func Yields(p *corev1.Pod) bool {
	kind, _, _, ok := VirtualOwner(p)
	return ok && kind == KindCapacityBuffer
}

// NewVirtualPod is the i-th virtual pod of the object kind/namespace/name,
// from a pod template: named "<name>-virtual-<i>" in the object's
// namespace, with a UID derived from both, so every solve (and every
// process) sees the same pod. It is pending and unschedulable, as the
// pods it stands in for would be.
func NewVirtualPod(kind, namespace, name string, i int, template corev1.PodTemplateSpec) corev1.Pod {
	pod := corev1.Pod{ObjectMeta: *template.ObjectMeta.DeepCopy(), Spec: *template.Spec.DeepCopy()}
	pod.Name = fmt.Sprintf("%s-virtual-%d", name, i)
	pod.Namespace = namespace
	pod.GenerateName = ""
	pod.UID = types.UID(fmt.Sprintf("virtual/%s/%s/%s/%d", kind, namespace, name, i))
	pod.ResourceVersion, pod.OwnerReferences = "", nil
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[VirtualPodAnnotationKey] = VirtualPodFor(kind, namespace, name)
	pod.Spec.NodeName = ""
	pod.Status = corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
	}}}
	return pod
}

// splitVirtual sorts virtual pods into those that hold capacity and those
// that yield it (Yields), dropping any without the annotation: only a
// marked pod can be kept from being nominated or bound.
func splitVirtual(pods []corev1.Pod) (holding, yielding []*corev1.Pod) {
	for i := range pods {
		p := &pods[i]
		switch {
		case !IsVirtual(p):
		case Yields(p):
			yielding = append(yielding, p)
		default:
			holding = append(holding, p)
		}
	}
	return holding, yielding
}
