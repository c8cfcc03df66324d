// Package fake is a recording CloudProvider for pure tests only: unit
// tests of code that calls the cloud seam (provisioning, disruption,
// decorators) without a cluster or a simulated cloud. It records every call,
// launches nothing, keeps its "instances" in memory and picks the cheapest
// compatible offering; it does not model reservations being used up,
// capacity pools, interruptions over time or the reserved → spot →
// on-demand order beyond price. Controller and end-to-end tests use the
// simulated cloud instead.
package fake
