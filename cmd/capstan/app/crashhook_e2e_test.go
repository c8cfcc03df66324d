//go:build e2e

package app

import "testing"

// The e2e build has the crash hook, and only with its flag.
func TestCrashHookInTheE2EBuild(t *testing.T) {
	cmd := newControllerCommand()
	if cmd.Flags().Lookup("test-crash-after-launch-file") == nil {
		t.Fatal("the e2e build has no --test-crash-after-launch-file")
	}
	if (testHooks{}).afterCreate() != nil {
		t.Error("a hook without --test-crash-after-launch-file")
	}
	if (testHooks{CrashFile: "x"}).afterCreate() == nil {
		t.Error("no hook with --test-crash-after-launch-file")
	}
}
