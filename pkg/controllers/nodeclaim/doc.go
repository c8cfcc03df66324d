// Package nodeclaim runs a NodeClaim's life: it gathers the NodeClaim
// (past the cache before a launch) and its Node, asks the pure
// lifecycle.Step what comes next — launch through the cloud seam,
// registration (the Node gets the finalizer, labels and taints and loses
// the unregistered taint), initialization, the Ready condition, the
// launch and registration timeouts — and hands the effects to
// pkg/controllers/apply. A launch that fails for want of capacity deletes
// the NodeClaim and asks the provisioner for a solve at once
// (effects.TriggerSolve). PodEvents stamps lastPodEventTime the same way.
package nodeclaim
