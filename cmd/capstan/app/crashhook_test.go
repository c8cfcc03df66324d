//go:build !e2e

package app

import "testing"

// A normal build's controller has no test-only flags, hidden or not.
func TestNoTestFlagsInTheProductionBuild(t *testing.T) {
	if f := newControllerCommand().Flags().Lookup("test-crash-after-launch-file"); f != nil {
		t.Errorf("the production build has --%s", f.Name)
	}
	var h testHooks
	if h.afterCreate() != nil {
		t.Error("the production build has an after-create hook")
	}
}
