// Package provreq answers sig-autoscaling's ProvisioningRequests
// (autoscaling.x-k8s.io/v1, the API Kueue's provisioning admission check
// uses) as pure steps: a request, the PodTemplates its pod sets name, the
// pods consuming it, the NodeClaims launched for it and a cluster snapshot
// in; the conditions to set, the events, the virtual pods holding its
// capacity and when to look again out.
//
// Two classes are served; any other class is left alone, as the API
// requires of an autoscaler that does not know it:
//
//   - check-capacity.autoscaling.x-k8s.io: the pod sets are solved against
//     existing nodes, in-flight NodeClaims and what the NodePools could
//     launch (provisioning.Solve), and nothing is launched.
//   - best-effort-atomic-scale-up.autoscaling.x-k8s.io: the pod sets become
//     virtual pods (VirtualPods) of one atomic group, so the provisioner's
//     solve launches capacity for all of them or none; the step reads the
//     group's NodeClaims to set Provisioned, then keeps the virtual pods
//     (booked capacity) until the request's own pods replace them or the
//     booking expires.
//
// The condition types, reasons and messages, the booking duration (10
// minutes) and the request's expiry (7 days unprovisioned) follow Cluster
// Autoscaler (cluster-autoscaler/provisioningrequest/conditions,
// processors/provreq); where Capstan differs, docs/batch.md says why.
package provreq
