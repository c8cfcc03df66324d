//go:build e2e

// Package faults is the end-to-end suite of faults injected into a running
// Capstan while it disrupts nodes: the controller killed (SIGKILL, no
// clean-up) mid-command and mid-drain, a leader handover between two
// replicas, an insufficient-capacity storm and a spot interruption storm.
// Every scenario runs the independent invariant checker (test/invariants)
// for its whole life, so a broken PDB, a budget exceeded, a pod Pending too
// long or an instance leaked fails it, and ends by checking that the
// simulated cloud's instances and the NodeClaims agree one for one. See
// docs/reliability.md.
package faults
