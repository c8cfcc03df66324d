// Package v1alpha1 holds the karpenter.sh/v1alpha1 API that Capstan
// serves: NodeOverlay, which adjusts the prices and extended-resource
// capacity of the instance types every decision sees (docs/overlay.md).
// The schema and its messages match the reference's v1alpha1 CRD
// (kubernetes-sigs/karpenter pkg/apis/crds/karpenter.sh_nodeoverlays.yaml)
// so users' manifests work unchanged.
//
// +kubebuilder:object:generate=true
// +groupName=karpenter.sh
package v1alpha1
