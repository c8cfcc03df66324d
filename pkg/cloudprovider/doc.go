// Package cloudprovider is the one seam between Capstan and a cloud: the
// CloudProvider interface with its documented contracts, the optional
// InterruptionSource next to it, the typed errors providers return
// (InsufficientCapacityError, NodeClaimNotFoundError, ...), the values that
// flow through it (InstanceType, Offering, RepairPolicy) and the unavailable-offerings
// cache that turns insufficient-capacity errors into fast fallback.
//
// Everything here is a plain value or a small thread-safe cache driven by
// an injected clock, so the pure core (provisioning, disruption) and the
// simulator can import it without pulling in a client. Providers (sim,
// aws, ...) implement the interface; they never import controllers.
package cloudprovider
