// Package fallback is the end-to-end suite of seed 003's spot-to-on-demand
// fallback, run with long batch windows (idle 30 s, max 60 s) so it shows
// that re-provisioning after a failed launch does not wait for a window.
package fallback
