// Package effects is the vocabulary of changes Capstan's pure steps ask
// for: create or delete a NodeClaim, set or remove a condition, merge
// labels and annotations, record a launch, patch a Node, record an event,
// mark offerings unavailable, trigger a solve, requeue, evict or delete a
// pod, launch or terminate an instance.
//
// Effects are data only. A step (pkg/lifecycle, pkg/disruption,
// pkg/drain, pkg/scaleup …) decides and returns them, building every
// event reason, message and condition itself; an applier carries them
// out without deciding anything: pkg/controllers/apply against the API
// server and the cloud, pkg/simulator against its in-memory world. That
// is what keeps `capstan simulate` and the controller one implementation
// (docs/architecture.md).
package effects
