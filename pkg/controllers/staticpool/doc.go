// Package staticpool keeps each static NodePool (spec.replicas set) at its
// replicas: it gathers the NodePool's NodeClaims, their nodes and pods,
// calls scaleup.DecideStatic and applies the NodeClaims it creates or
// deletes (docs/static.md). `capstan simulate` calls the same step.
package staticpool
