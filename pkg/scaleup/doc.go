// Package scaleup is the provisioner's decision as a pure step: the batch
// (Batch: its windows, immediate re-plans, re-checks), llmaz flavors
// resolved into ordered node-selector terms, the solve, and the
// NodeClaims to create (rendered by pkg/provisioning with the
// annotations that explain them). A Decision's Effects are applied by
// the provisioner controller to the API server and by `capstan simulate`
// to its in-memory world; `capstan explain` asks it what the next
// provisioning would do.
package scaleup
