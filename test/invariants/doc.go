// Package invariants is an independent checker of what Capstan promises
// while it disrupts nodes, for end-to-end suites to run alongside their
// scenarios. It watches a scenario's pods, PDBs and NodePool's NodeClaims
// as the API server reports every change to them, and polls the simulated
// cloud's inventory, and flags as a violation, naming the objects
// involved:
//
//   - a PDB broken: fewer Ready, non-terminating pods of its selector than
//     a rule the scenario states (RequirePDB), or a PDB reporting fewer
//     healthy pods than it requires, once it held;
//   - more NodeClaims deleting at once for a voluntary disruption reason
//     (the NodeClaim's DisruptionReason condition) than the budget for it;
//   - a do-not-disrupt pod terminating on a node voluntarily disrupted;
//   - more live NodeClaims in a capacity reservation than its slots;
//   - a running instance of the NodePool without a NodeClaim, or a live
//     NodeClaim without a running instance, for longer than garbage
//     collection takes to notice;
//   - a pod Pending longer than a bound.
//
// It also records what scenarios assert on afterwards: the NodeClaims'
// history (PreSpun checks replacements came up first), the most deleting
// at once, the longest Pending.
//
// The checker shares no code with the controllers it checks: it imports
// Capstan's API types and Kubernetes' client libraries only, and reads
// the cloud's state file through its own minimal view of it, so a bug in
// the controllers' predicates cannot hide itself (TestSharesNoCode keeps
// it so). Its checks are plain functions of the observed changes and
// their times; Watch feeds them from a cluster and fails the test with
// every violation as it is found.
package invariants
