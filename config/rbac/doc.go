// Package rbac embeds Capstan's generated roles (role.yaml from
// cmd/capstan/app/rbac.go and pkg/providers/*/rbac.go, sim-kubelet.yaml
// from pkg/cloudprovider/sim/simapi/rbac.go) so tests bind exactly what is checked in,
// and holds them to an allowlist with the reason for every rule.
package rbac
