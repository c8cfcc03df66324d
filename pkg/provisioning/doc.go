// Package provisioning is Capstan's scheduling solver: given pending pods,
// the cluster's nodes and in-flight NodeClaims, the NodePools and the
// instance types each may launch, Solve decides which pods go to existing
// capacity, which new NodeClaims to create (each with its price-ordered
// instance-type options) and why any pod cannot be placed. It is pure:
// plain values in, a decision out, no API client and no clock, so the
// provisioner controller, consolidation and `capstan simulate` all call the
// same code.
package provisioning
