// Package drain decides how to empty a node that is being terminated: the
// pure drain plan. Given the node's pods, now and the termination
// deadline (deletion time plus the NodeClaim's terminationGracePeriod), it
// says which pods to evict through the Eviction API now, which to delete
// outright so their own grace period ends by the deadline, and when to
// look again. The termination controller executes the plan.
//
// PodDisruptionBudgets decide evictions: PDBStatus computes a PDB's
// status as kube-controller-manager's disruption controller would, for
// simulate, which has none, and Evictable is the Eviction API's check.
package drain
