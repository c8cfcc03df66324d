// Package nodepool is the NodePool controller. It stamps each NodePool
// with its static hash (karpenter.sh/nodepool-hash and -hash-version,
// decision 13), totals the capacity of the NodeClaims it owns into
// status.resources, and keeps its conditions: ValidationSucceeded (what
// the CRD cannot check: budget schedules and time zone, the
// return-to-preferred and rebalance annotations; pkg/admission, which
// simulate applies too),
// NodeClassReady (the referenced NodeClass is of a kind the cloud provider
// serves, per its GetSupportedNodeClasses, exists and is Ready) and Ready
// (both are True).
//
// Every decision is the pure Step (status.go); the Controller
// (controller.go) only reads the NodePool, its NodeClaims and its
// NodeClass, calls Step and patches the result.
package nodepool
