// Package capacitybuffer is the shell of CapacityBuffers (behind the
// CapacityBuffer feature gate): for each buffer it reads the chunk's pod
// template and its scalable object's scale (clusterstate.ResolveBuffer),
// sizes it with buffers.Size, sets the Provisioning condition from where
// the provisioner's last decision placed the buffer's virtual pods
// (Placed, buffers.Provisioning), and patches the status that changed.
// The provisioner reads the virtual pods from the status it writes
// (clusterstate.VirtualPods) and is asked to solve again when a buffer's
// size changes. docs/batch.md, "Capacity buffers".
package capacitybuffer
