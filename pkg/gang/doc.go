// Package gang tells which pods form an all-or-nothing group (a gang, an
// atomic group) and how many of them must be placed together. It is the
// one place membership is read: the solver (pkg/provisioning), the
// release of a partly launched group and consolidation all ask it.
//
// A pod belongs to at most one group, named by a key:
//
//   - Kubernetes' Workload API (scheduling.k8s.io/v1alpha3, gate
//     GenericWorkload): pod.spec.schedulingGroup.podGroupName names a
//     PodGroup in the pod's namespace; its spec.schedulingPolicy.gang
//     .minCount is the min count. Key "scheduling.k8s.io/PodGroup/<ns>/<name>".
//   - the scheduler-plugins convention: the label
//     scheduling.x-k8s.io/pod-group names a PodGroup
//     (scheduling.x-k8s.io/v1alpha1) in the pod's namespace; its
//     spec.minMember is the min count. Key
//     "scheduling.x-k8s.io/PodGroup/<ns>/<name>".
//   - Capstan's annotation capstan.dev/atomic-group: the key is its value
//     as written (ProvisioningRequests' virtual pods use
//     "ProvisioningRequest/<ns>/<name>"), and every pod carrying it must be
//     placed.
//
// The min counts the group objects declare are gathered by the shell
// (Declared); a group whose object is not known counts every member it
// has. See docs/batch.md, "Gangs".
//
// The solver (pkg/provisioning, through scaleup.Decide) places a gang's
// pods only if at least its min count can be (members bound or
// nominated count); otherwise each is unplaced with IncompleteGang and
// nothing is held for it. Every NodeClaim launched for a gang carries
// AtomicGroupAnnotationKey (the key), AtomicGroupSizeAnnotationKey (how
// many NodeClaims the launch made) and AtomicGroupLaunchAnnotationKey
// (the launch's name); the release (lifecycle.ReleaseGroups) lets a
// launch go when one of them fails (LaunchFailure), is gone, or not all
// are Launched in time, and marks a complete launch with
// AtomicGroupLaunchedAnnotationKey.
//
// The package is pure: it takes pods and objects as values.
package gang
