// Package overlay applies NodeOverlays (karpenter.sh/v1alpha1) to the
// instance types the cloud offers each NodePool: a pure step, plain values
// in, adjusted instance types and each overlay's verdict out. The shells
// call it where they gather instance types (InstanceTypes: the
// controllers' cluster state, the metrics collector and simulate), so
// every decision — the solver, consolidation, returns to preferred
// capacity, explain, simulate and the cost metrics — sees the same prices
// and capacities. Unchanged instance types and offerings are shared, not
// copied (docs/overlay.md, "Memory").
//
// The semantics are the reference's (kubernetes-sigs/karpenter v1.14.1
// pkg/controllers/nodeoverlay, designs/node-overlay.md): an overlay
// selects the instance types whose labels, with the NodePool's name and
// template labels, are compatible with its requirements, and of those the
// offerings its requirements allow; overlays merge by weight, the higher
// weight's value winning; two of equal weight setting the same value on
// one offering or resource conflict, and the one that comes later (by
// name, descending) is applied nowhere.
package overlay
