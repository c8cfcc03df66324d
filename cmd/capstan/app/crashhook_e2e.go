//go:build e2e

package app

import (
	"os"

	"github.com/spf13/cobra"
)

// testHooks are the e2e build's test-only flags (`go build -tags e2e`,
// bin/capstan-e2e): never in the production binary.
type testHooks struct {
	// CrashFile: when the file exists as a launch succeeds, the controller
	// removes it and exits before recording the launch.
	CrashFile string
}

func (h *testHooks) bindFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&h.CrashFile, "test-crash-after-launch-file", "", "test only: exit right after a launch while this file exists")
	_ = f.MarkHidden("test-crash-after-launch-file")
}

// afterCreate is the crash hook, or nil without --test-crash-after-launch-file.
func (h testHooks) afterCreate() func(nodeClaim string) {
	if h.CrashFile == "" {
		return nil
	}
	return func(string) {
		if os.Remove(h.CrashFile) == nil {
			os.Exit(3)
		}
	}
}
