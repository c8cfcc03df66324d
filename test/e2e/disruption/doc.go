// Package disruption is the end-to-end suite of voluntary disruption
// (seed 004) on the local control plane: empty nodes are removed within
// their NodePool's budget, a budget of 0 keeps them, drifted nodes are
// replaced with pre-spun replacements, and do-not-disrupt pods and PDBs
// that allow no eviction keep drifted nodes; a Deployment scaled from 30
// replicas to 5 is consolidated to within 1.25× of a fresh solve, and an
// on-demand node moves into a reservation slot that frees up; the
// forceful methods (a spot interruption, expiry, a reservation's end) and
// fallback nodes returning to spot. The independent invariant checker
// (test/invariants) watches every scenario throughout: PDBs, budgets per
// reason, do-not-disrupt pods, reservation slots, the cloud's inventory
// against the NodeClaims and, where bounded, pods' Pending time.
package disruption
