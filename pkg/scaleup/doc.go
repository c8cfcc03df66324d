// Package scaleup is the provisioner's decision as a pure step: the batch
// window, llmaz flavors resolved into ordered node-selector terms, the
// solve, and the NodeClaims to create (rendered by pkg/provisioning with
// the annotations that explain them). The provisioner controller applies
// a Decision to the API server; `capstan simulate` to its in-memory
// world; `capstan explain` asks it what the next provisioning would do.
package scaleup
