// Package sim is the simulated cloud as a provider of `capstan
// controller` (--cloud-provider=sim): its flags, its SimNodeClass kind,
// its RBAC and its controllers, wired to pkg/cloudprovider/sim.
package sim
