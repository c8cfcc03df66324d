// Package provisioner watches pods no node can take and launches
// NodeClaims for them: it batches pending pods (an idle window and a
// maximum window), takes a snapshot of the cluster, calls the pure
// provisioning.Solve, creates the NodeClaims it plans and tells each pod
// why it waits when it can't be placed. Capstan nominates; kube-scheduler
// binds.
package provisioner
