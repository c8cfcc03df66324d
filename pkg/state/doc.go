// Package state turns the cluster, as the controllers' informer caches see
// it, into the plain values the pure steps take: a provisioning.Input with
// existing nodes, in-flight NodeClaims and their pods, the NodePools, each
// NodePool's instance types and the daemonsets. A snapshot is built fresh
// for every decision and never shared, so the steps can't see it change.
package state
