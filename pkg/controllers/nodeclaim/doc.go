// Package nodeclaim runs a NodeClaim's life: launch (through the cloud
// seam; on insufficient capacity the offerings are marked, the NodeClaim
// deleted and the provisioner re-run at once), registration (the Node with
// the instance's providerID gets the finalizer, labels and taints, and
// loses the unregistered taint), initialization (Ready, startup taints
// gone, extended resources reported) and the liveness timeout. Each step
// is decided by the pure Next from the NodeClaim, its Node and now.
package nodeclaim
