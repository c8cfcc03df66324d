// Package v1 holds the karpenter.sh/v1 API that Capstan serves: NodePool and
// NodeClaim, their defaults and validation, and the well-known labels,
// annotations, taints and finalizer. The schema matches the public Karpenter
// v1 API so users' manifests work unchanged.
//
// +kubebuilder:object:generate=true
// +groupName=karpenter.sh
package v1
