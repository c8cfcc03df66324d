package gang

import (
	corev1 "k8s.io/api/core/v1"
)

// Keys of the labels and annotations gangs are read from and NodeClaims
// launched for them carry.
const (
	// AtomicGroupAnnotationKey on a pod names its group; every pod with
	// the same value must be placed, or none. On a NodeClaim it names the
	// group the NodeClaim was launched for.
	AtomicGroupAnnotationKey = "capstan.dev/atomic-group"
	// AtomicGroupSizeAnnotationKey on a NodeClaim is how many NodeClaims
	// its group's launch made, in decimal.
	AtomicGroupSizeAnnotationKey = "capstan.dev/atomic-group-size"
	// AtomicGroupLaunchAnnotationKey on a NodeClaim names its group's
	// launch (the first NodeClaim's name): the NodeClaims released
	// together when one of them fails. A group launched again after a
	// release is a new launch.
	AtomicGroupLaunchAnnotationKey = "capstan.dev/atomic-group-launch"
	// AtomicGroupLaunchedAnnotationKey on a NodeClaim is when every
	// NodeClaim of its launch was Launched (RFC 3339): from then on the
	// launch is complete and no longer released as a whole.
	AtomicGroupLaunchedAnnotationKey = "capstan.dev/atomic-group-launched"
	// PodGroupLabelKey is scheduler-plugins' coscheduling label: the
	// name of the pod's PodGroup (scheduling.x-k8s.io/v1alpha1) in its
	// namespace.
	PodGroupLabelKey = "scheduling.x-k8s.io/pod-group"
)

// Prefixes of the keys of groups declared by objects.
const (
	workloadPrefix = "scheduling.k8s.io/PodGroup/"
	pluginPrefix   = "scheduling.x-k8s.io/PodGroup/"
)

// WorkloadKey is the key of the Workload API's PodGroup ns/name.
func WorkloadKey(namespace, name string) string {
	return workloadPrefix + namespace + "/" + name
}

// PluginKey is the key of scheduler-plugins' PodGroup ns/name.
func PluginKey(namespace, name string) string {
	return pluginPrefix + namespace + "/" + name
}

// KeyOf is the key of the group the pod belongs to, or "" for a pod in
// none. A pod naming several is in the first of: the Workload API's
// schedulingGroup (what kube-scheduler itself gangs by), Capstan's
// annotation, scheduler-plugins' label.
func KeyOf(pod *corev1.Pod) string {
	if g := pod.Spec.SchedulingGroup; g != nil && g.PodGroupName != nil && *g.PodGroupName != "" {
		return WorkloadKey(pod.Namespace, *g.PodGroupName)
	}
	if key := pod.Annotations[AtomicGroupAnnotationKey]; key != "" {
		return key
	}
	if name := pod.Labels[PodGroupLabelKey]; name != "" {
		return PluginKey(pod.Namespace, name)
	}
	return ""
}

// Declared are the min counts group objects declare, by key.
type Declared map[string]int

// MinCount is how many of the group's members must be placed together:
// what its object declares, or every member (members) when none does.
// A declared count above the members there are cannot be met until more
// are created.
func MinCount(key string, declared Declared, members int) int {
	if n, ok := declared[key]; ok {
		return n
	}
	return members
}

// IsGang says whether the group key (a member's, gang.KeyOf) must be
// placed all or nothing: every group but one its object declares
// without a gang policy.
func IsGang(key string, declared Declared) bool {
	n, ok := declared[key]
	return key != "" && (!ok || n != notAGang)
}
