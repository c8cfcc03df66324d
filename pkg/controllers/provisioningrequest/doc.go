// Package provisioningrequest is the controller that answers
// ProvisioningRequests (autoscaling.x-k8s.io/v1): it gathers a request,
// its PodTemplates, the pods consuming it, its atomic group's NodeClaims
// and the cluster snapshot, calls provreq.Decide and applies the
// conditions, events and metric it returns. The capacity itself is
// launched by the provisioner, which solves the requests' virtual pods
// (clusterstate.VirtualPods); see docs/batch.md, "ProvisioningRequest".
package provisioningrequest
