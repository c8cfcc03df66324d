// Package scheduling holds the pure building blocks of placement decisions.
// It is a leaf: it imports only Kubernetes API packages and Capstan's
// api/v1, never a client or a clock.
//
// The requirements algebra describes the values each label key may take on
// a node and whether the node may lack the label altogether. A Requirement
// covers one key: a finite set of allowed values (In; the empty set with
// absence allowed is DoesNotExist), or the complement of a finite set
// (NotIn, Exists), optionally limited to integers within bounds (Gt, Lt,
// Gte, Lte). Requirements maps keys to them; a missing key means any value
// or none. Requirement values are immutable and cheap to share, and
// intersection, compatibility and matching checks do not allocate on their
// success paths, because the scheduler runs them for every pod against
// every candidate node.
//
// Matching a concrete node (Requirements.Matches) follows kube-scheduler's
// node-affinity semantics exactly; the tests check this against
// k8s.io/component-helpers.
package scheduling
