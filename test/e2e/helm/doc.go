//go:build e2e

// Package helm installs the Helm chart charts/capstan into the local
// cluster: the rendered chart passes a server-side dry run, its
// ServiceAccount and RBAC are installed, and `capstan controller`, run out
// of cluster with the chart's arguments and authenticated with a token of
// the chart's ServiceAccount, provisions and disrupts a workload. So the
// chart's RBAC suffices, and it is exactly the generated roles.
package helm
