// Package index holds the field indexes the controllers share, registered
// once with the manager: Nodes and NodeClaims by provider id (how the
// lifecycle, termination and garbage collection find one from the
// other) and NodeClaims by node name (the pod-event stamp). Kept here so
// no controller imports another for them.
package index
