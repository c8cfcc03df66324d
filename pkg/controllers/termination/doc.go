// Package termination gracefully removes nodes: when a NodeClaim (or its
// Node) is deleted, it taints the node karpenter.sh/disrupted, drains it
// through the Eviction API following the pure drain plan (PDBs respected,
// DaemonSets last, terminationGracePeriod enforced), waits for volumes to
// detach, terminates the instance and only then releases the finalizers.
// Deleting a Node or a NodeClaim deletes the other.
package termination
