// Package simulator is `capstan simulate`: a what-if run of Capstan over
// an in-memory cluster in virtual time. It drives the controller's own
// pure steps (batch windows, scaleup.Decide and the solver, the
// NodeClaim lifecycle, garbage collection) and the simulated cloud with
// its in-memory kubelet, so what it reports is what the controller would
// do; only what a cluster does by itself (workload controllers,
// kube-scheduler's binding, kwok) is stood in for, as docs/simulate.md
// describes.
package simulator
