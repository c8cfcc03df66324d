// Package nodeoverlay is the NodeOverlay controller: it evaluates every
// NodeOverlay against every NodePool's instance types with the same step
// the decisions use (overlay.InstanceTypes) and patches each overlay's
// ValidationSucceeded and Ready conditions (overlay.Conditions), so a user
// sees a conflicting or invalid overlay, which is applied nowhere
// (docs/overlay.md).
package nodeoverlay
