// Package index holds the field indexes the controllers share, registered
// once with the manager: Nodes and NodeClaims by provider id (how the
// lifecycle, termination and garbage collection find one from the
// other), NodeClaims by node name (the pod-event stamp) and Pods by node
// (the drain); and NodeOf, a NodeClaim's Node. Kept here so no
// controller imports another for them.
package index
