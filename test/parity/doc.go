// Package parity compares what an end-to-end scenario did on the local
// cluster with what `capstan simulate` does with the same manifests, cloud
// profile and controller flags (docs/simulate.md, "Parity with the
// cluster").
//
// A scenario records the objects it creates and changes in a Script, each
// at its offset from the simulated cloud's start, so simulate applies them
// when the cluster got them (simulate.capstan.dev/apply-at) and meets the
// profile's timed events as the controller did. Simulate runs the capstan
// command's simulate in process, with the flags of the scenario's
// controller that simulate shares. Both runs are reduced to an Outcome —
// the NodeClaims left by instance type, zone and capacity type, the
// launched ones deleted with their reasons, the pods Running — and
// Compare fails the test on any difference not listed, with its reason,
// as a known one.
package parity
