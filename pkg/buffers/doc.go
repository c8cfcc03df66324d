// Package buffers sizes CapacityBuffers (autoscaling.x-k8s.io/v1beta1) as
// pure steps: Size takes a buffer, the chunk's pod template and its
// scalable object's replicas as the shell read them, and returns the
// buffer's status (replicas, the ReadyForProvisioning condition) and its
// virtual pods (state.NewVirtualPod), which every solve keeps capacity
// for after the pending pods (they yield: state.Yields). Provisioning
// turns where a decision placed a buffer's virtual pods into its
// Provisioning condition. The capacitybuffer controller writes both to
// the buffer's status; clusterstate.VirtualPods and `capstan simulate`
// call Size on what they read, so every decision sees the same pods.
// Sizing follows the reference (kubernetes-sigs/karpenter v1.14.1
// pkg/controllers/capacitybuffer) and sig-autoscaling's API; where they
// differ, docs/batch.md ("Capacity buffers") says which Capstan follows.
package buffers
