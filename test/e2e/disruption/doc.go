// Package disruption is the end-to-end suite of voluntary disruption
// (seed 004) on the local control plane: empty nodes are removed within
// their NodePool's budget, a budget of 0 keeps them, drifted nodes are
// replaced with pre-spun replacements, and do-not-disrupt pods and PDBs
// that allow no eviction keep drifted nodes; a Deployment scaled from 30
// replicas to 5 is consolidated to within 1.25× of a fresh solve, and an
// on-demand node moves into a reservation slot that frees up. A watch
// checks throughout every scenario that no PDB is violated and no budget
// exceeded.
package disruption
