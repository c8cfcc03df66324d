// Package checker independently verifies a provisioning Result against its
// Input: no node over-committed, no requirement or taint violated, no
// reservation over-booked, no limit exceeded. It deliberately does not use
// the solver's predicates: it matches labels with kube-scheduler's own
// helpers (k8s.io/component-helpers) on concrete nodes — every instance
// type and offering a NodeClaim could launch — and adds up resources with
// resource.Quantity, so a bug in the solver's fast paths cannot hide
// itself. Tests run it on random workloads and on every benchmark result.
package checker
