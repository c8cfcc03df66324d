// Package drain decides how to empty a node that is being terminated: the
// pure drain plan. Given the node's pods, now and the termination
// deadline (deletion time plus the NodeClaim's terminationGracePeriod), it
// says which pods to evict through the Eviction API now, which to delete
// outright so their own grace period ends by the deadline, and when to
// look again. The termination controller executes the plan.
package drain
