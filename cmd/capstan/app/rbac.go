package app

// The permissions `capstan controller` needs; `make generate` turns these
// markers into config/rbac/role.yaml (the ClusterRole capstan and the Role
// capstan in kube-system), together with each provider's own markers
// (pkg/providers/*/rbac.go). The simulated cloud's kubelet needs more: see
// pkg/cloudprovider/sim/simapi/rbac.go. config/rbac's test holds every rule to an
// allowlist with the reason for it; keep both in step.
//
// Nodes: the controllers read them, patch labels, taints and finalizers and
// delete them while terminating; nothing in the controller creates or
// updates a Node or writes its status (only the sim kubelet does).
// NodePools are only patched (hash annotations) and their status patched;
// NodeClaims are created by the provisioner, patched (finalizers, synced
// fields) and deleted. NodeOverlays are read and their status patched
// (ValidationSucceeded, Ready). Every write is a patch, never an update, so no
// update verb; status subresources are only patched, never read.
//
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups="",resources=pods/eviction,verbs=create
// +kubebuilder:rbac:groups="",resources=namespaces;persistentvolumeclaims;persistentvolumes,verbs=get;list;watch
// +kubebuilder:rbac:groups=storage.k8s.io,resources=volumeattachments,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch;patch;delete
// +kubebuilder:rbac:groups="";events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=apps,resources=daemonsets,verbs=get;list;watch
// +kubebuilder:rbac:groups=storage.k8s.io,resources=storageclasses,verbs=get;list;watch
// +kubebuilder:rbac:groups=karpenter.sh,resources=nodeclaims,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=karpenter.sh,resources=nodepools,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=karpenter.sh,resources=nodepools/status;nodeclaims/status,verbs=patch
// +kubebuilder:rbac:groups=karpenter.sh,resources=nodeoverlays,verbs=get;list;watch
// +kubebuilder:rbac:groups=karpenter.sh,resources=nodeoverlays/status,verbs=patch
// +kubebuilder:rbac:groups=llmaz.io,resources=openmodels,verbs=get;list;watch
// +kubebuilder:rbac:groups=scheduling.k8s.io;scheduling.x-k8s.io,resources=podgroups,verbs=get;list;watch
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch
//
// CapacityBuffers (the CapacityBuffer gate) are read and their status
// patched; a buffer's chunk is a PodTemplate's or a workload's pod
// template, and its percentage reads the workload's scale subresource.
//
// +kubebuilder:rbac:groups=autoscaling.x-k8s.io,resources=capacitybuffers,verbs=get;list;watch
// +kubebuilder:rbac:groups=autoscaling.x-k8s.io,resources=capacitybuffers/status,verbs=patch
// +kubebuilder:rbac:groups="",resources=podtemplates,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps,resources=deployments;statefulsets;replicasets,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps,resources=deployments/scale;statefulsets/scale;replicasets/scale,verbs=get
//
// With --metrics-secure, each request to metrics and explain is checked by
// the API server: its bearer token by a TokenReview, what it asks by a
// SubjectAccessReview (pkg/controllers/apiauth).
//
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create
//
// Leader election takes the Lease capstan-controller (LeaderElectionID in
// controller.go) in --leader-election-namespace, kube-system by default: a
// namespaced Role, so Capstan cannot touch kube-scheduler's or
// kube-controller-manager's leases there, nor any node's heartbeat in
// kube-node-lease. get and update are limited to Capstan's own Lease by
// name; create cannot be (RBAC never limits create by resourceNames, as the
// object's name is not part of the request's URL), so it stays on every
// Lease in the namespace, which only lets Capstan create Leases that do not
// exist yet, never overwrite one. A controller run with another
// --leader-election-namespace needs this Role created in that namespace.
//
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=kube-system,resources=leases,verbs=create
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=kube-system,resources=leases,resourceNames=capstan-controller,verbs=get;update
