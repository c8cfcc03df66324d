// Package catalog is the list of instance types the simulated cloud sells:
// AWS-like names, shapes, GPUs, pod limits and on-demand prices per region,
// with the karpenter.k8s.aws labels workloads select on. The facts live in
// code (families_*.go) so they are reviewed as code; `go run ./hack/catalog`
// renders them into instancetypes.json, which is embedded and decoded by
// Load, so the running binary never rebuilds them and a stale file fails a
// test.
package catalog
