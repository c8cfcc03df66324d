package sim

// The controller's permissions on the simulated cloud's kind; `make
// generate` adds these markers to config/rbac/role.yaml with the core's
// (cmd/capstan/app/rbac.go). Its kubelet's own ClusterRole is
// pkg/cloudprovider/sim/simapi/rbac.go.
//
// +kubebuilder:rbac:groups=sim.capstan.dev,resources=simnodeclasses,verbs=get;list;watch
// +kubebuilder:rbac:groups=sim.capstan.dev,resources=simnodeclasses/status,verbs=patch
