// Package v1 holds the karpenter.k8s.aws/v1 API that Capstan's AWS
// provider serves: the EC2NodeClass that NodePools reference to launch EC2
// instances. Its schema, defaults and validation are those of the public
// Karpenter AWS provider's v1 EC2NodeClass (release v1.14), so users'
// manifests apply unchanged. Import it as awsv1 next to the karpenter.sh
// API (api/v1).
//
// +kubebuilder:object:generate=true
// +groupName=karpenter.k8s.aws
package v1
