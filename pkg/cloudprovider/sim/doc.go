// Package sim is Capstan's simulated cloud, the embedded default
// CloudProvider: instance types from the catalog, offerings per zone and
// capacity type with finite pools, spot prices and capacity reservations
// from a CloudProfile, launch errors named as the real clouds name them,
// interruptions in the aws, gcp and azure styles, a kubelet seam that
// registers Nodes, and an inventory that survives the controller. All time
// comes from an injected clock.
package sim
