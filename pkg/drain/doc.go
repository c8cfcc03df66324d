// Package drain decides how to empty a node that is being terminated: the
// pure drain plan and the termination step around it. Given the node's
// pods, now and the termination deadline (deletion time plus the
// NodeClaim's terminationGracePeriod), PlanDrain says which pods to evict
// through the Eviction API now, which to delete outright so their own
// grace period ends by the deadline, and when to look again. Drain and
// Finish turn a deleted NodeClaim into effects (pkg/effects): taint and
// delete its node, evict or delete its pods, wait for its volumes,
// terminate the instance, release the finalizers. The termination
// controller and simulate gather, call them and apply the effects.
//
// PodDisruptionBudgets decide evictions: PDBStatus computes a PDB's
// status as kube-controller-manager's disruption controller would, for
// simulate, which has none, and Evictable is the Eviction API's check.
package drain
