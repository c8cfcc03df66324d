package aws

// The controller's permissions for the AWS provider; `make generate` adds
// these markers to config/rbac/role.yaml with the core's
// (cmd/capstan/app/rbac.go).
//
// +kubebuilder:rbac:groups=karpenter.k8s.aws,resources=ec2nodeclasses,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=karpenter.k8s.aws,resources=ec2nodeclasses/status,verbs=patch
//
// Nodes get the kube-dns Service's address as their cluster DNS, as the
// reference does: that one Service, read by name.
//
// +kubebuilder:rbac:groups="",resources=services,resourceNames=kube-dns,verbs=get
