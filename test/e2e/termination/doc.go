// Package termination is the end-to-end suite of node termination,
// garbage collection and crash safety: nodes drain through the Eviction
// API within PDBs, instances are terminated, nothing is leaked when the
// controller dies between launching an instance and recording it.
package termination
