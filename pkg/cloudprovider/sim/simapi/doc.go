// Package simapi holds the simulated cloud's seams that talk to the API
// server, for the controller: a kubelet that registers launched
// instances' Nodes (kwok then runs them) and SimNodeClasses read through
// the controller's cache. They live apart from package sim so that
// `capstan simulate`, which uses sim's in-memory seams, links no
// Kubernetes client (docs/simulate.md).
package simapi
