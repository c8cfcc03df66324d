// Package state turns the cluster, as the controllers' informer caches see
// it, into the plain values the pure steps take: a provisioning.Input with
// existing nodes, in-flight NodeClaims and their pods, the NodePools, each
// NodePool's instance types and the daemonsets. A snapshot is built fresh
// for every decision and never shared, so the steps can't see it change.
//
// Virtual pods (Objects.VirtualPods, virtual.go) hold capacity without
// existing: a CapacityBuffer's replicas, a ProvisioningRequest's pod sets.
// Each carries VirtualPodAnnotationKey ("<Kind>/<namespace>/<name>") and a
// deterministic name and UID (NewVirtualPod). Yields tells their order:
// a CapacityBuffer's yield (solved after the pending pods, so these start
// on the warm capacity and the buffer is refilled), every other kind's
// hold (solved before them). Build hands them to the solver apart from
// the pending pods; scaleup.Decide never nominates or tells them, and
// disruption keeps the capacity they fit (docs/batch.md, "Capacity
// buffers"). The shell gathers them in one place, clusterstate.VirtualPods.
package state
