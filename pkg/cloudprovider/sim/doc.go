// Package sim is Capstan's simulated cloud, the embedded default
// CloudProvider: instance types from the catalog, offerings per zone and
// capacity type with finite pools, spot prices and capacity reservations
// from a CloudProfile, launch errors named as the real clouds name them,
// interruptions in the aws, gcp and azure styles, nodes made unhealthy
// without a notice (kubelets or instances stopped) and the repair policies
// that judge them, a kubelet seam that registers and stops Nodes, and an
// inventory that survives the controller. All time
// comes from an injected clock.
package sim
