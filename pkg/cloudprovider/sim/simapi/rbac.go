package simapi

// The permissions Kubelet needs beyond the controller's own role
// (cmd/capstan/app/rbac.go): it registers Nodes and reports their capacity,
// as a real kubelet does under its own identity. `make generate` turns these
// markers into config/rbac/sim-kubelet.yaml, the ClusterRole
// capstan-sim-kubelet, bound to the controller only when it runs on the
// simulated cloud. (Stop's label patch and its read of the Node are in the
// controller's role already.)
//
// +kubebuilder:rbac:groups="",resources=nodes,verbs=create
// +kubebuilder:rbac:groups="",resources=nodes/status,verbs=patch
