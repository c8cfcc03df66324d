// Package v1beta1 holds the autoscaling.x-k8s.io/v1beta1 CapacityBuffer
// API that Capstan serves behind the CapacityBuffer feature gate
// (docs/batch.md, "Capacity buffers"). The schema, its validation rules
// and messages match the CRD kubernetes-sigs/karpenter v1.14.1 serves
// (pkg/apis/crds/autoscaling.x-k8s.io_capacitybuffers.yaml), itself the
// sig-autoscaling API of kubernetes/autoscaler's
// cluster-autoscaler/apis/capacitybuffer, so buffers written for either
// autoscaler work unchanged. The types are Capstan's own: the autoscaler
// module version carrying them is not one the module proxy serves.
//
// +kubebuilder:object:generate=true
// +groupName=autoscaling.x-k8s.io
package v1beta1
