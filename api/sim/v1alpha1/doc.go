// Package v1alpha1 holds the API of Capstan's simulated cloud: the
// SimNodeClass CRD (group sim.capstan.dev) that NodePools reference, and the
// CloudProfile file format that describes the simulated cloud itself.
//
// +kubebuilder:object:generate=true
// +groupName=sim.capstan.dev
package v1alpha1
