package app

// ProvisioningRequests (autoscaling.x-k8s.io, docs/batch.md): the
// provisioningrequest controller reads them and the PodTemplates their pod
// sets refer to, and patches only their status conditions.
//
// +kubebuilder:rbac:groups=autoscaling.x-k8s.io,resources=provisioningrequests,verbs=get;list;watch
// +kubebuilder:rbac:groups=autoscaling.x-k8s.io,resources=provisioningrequests/status,verbs=patch
// +kubebuilder:rbac:groups="",resources=podtemplates,verbs=get;list;watch
