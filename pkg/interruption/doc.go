// Package interruption decides what Capstan does about the cloud's
// interruption notices (decision 6): for a notice with a deadline the node
// is interrupted at once (the offering marked unavailable when the notice
// says the spot pool is short, the NodeClaim deleted with the deadline its
// drain must finish by, so replacements launch immediately); a rebalance
// recommendation is an event, or an expected interruption its NodePool
// opted into replacing; a preemptible VM's 24-hour limit is an expected
// interruption from a margin before it and a forceful one at GCP's own
// 30-second notice. Expected interruptions become the NodeClaim's
// InterruptionExpected condition, which the disruption engine acts on
// within budgets.
//
// The package is pure: notices, NodeClaims, NodePools and now in, a
// Decision out. The interruption controller and `capstan simulate` both
// drive a Handler.
package interruption
