package app

// The permissions `capstan controller` needs; `make generate` turns these
// markers into config/rbac/role.yaml.
//
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups="",resources=pods/eviction,verbs=create
// +kubebuilder:rbac:groups="",resources=namespaces;persistentvolumeclaims;persistentvolumes,verbs=get;list;watch
// +kubebuilder:rbac:groups=storage.k8s.io,resources=volumeattachments,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch;create;patch;update;delete
// +kubebuilder:rbac:groups="",resources=nodes/status,verbs=patch;update
// +kubebuilder:rbac:groups="";events.k8s.io,resources=events,verbs=create;patch;update
// +kubebuilder:rbac:groups=apps,resources=daemonsets,verbs=get;list;watch
// +kubebuilder:rbac:groups=storage.k8s.io,resources=storageclasses,verbs=get;list;watch
// +kubebuilder:rbac:groups=karpenter.sh,resources=nodepools;nodeclaims,verbs=get;list;watch;create;patch;update;delete
// +kubebuilder:rbac:groups=karpenter.sh,resources=nodepools/status;nodeclaims/status,verbs=get;patch;update
// +kubebuilder:rbac:groups=sim.capstan.dev,resources=simnodeclasses,verbs=get;list;watch;patch;update
// +kubebuilder:rbac:groups=sim.capstan.dev,resources=simnodeclasses/status,verbs=get;patch;update
// +kubebuilder:rbac:groups=llmaz.io,resources=openmodels,verbs=get;list;watch
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;create;update
