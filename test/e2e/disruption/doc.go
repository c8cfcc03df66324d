// Package disruption is the end-to-end suite of voluntary disruption
// (seed 004) on the local control plane: empty nodes are removed within
// their NodePool's budget, a budget of 0 keeps them, drifted nodes are
// replaced with pre-spun replacements, and do-not-disrupt pods and PDBs
// that allow no eviction keep drifted nodes. A watch checks throughout
// every scenario that no PDB is violated and no budget exceeded.
package disruption
