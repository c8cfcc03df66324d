// Package reservations is the end-to-end suite of seeds 001 and 002 on the
// local cluster: capacity reservations filled first and never over-booked,
// reserved-only NodePools waiting when full, the reserved → spot →
// on-demand order, unselected open reservations left alone, and GPU
// flavors (llmaz and plain ordered terms) falling back in order.
package reservations
