//go:build !e2e

package app

import "github.com/spf13/cobra"

// testHooks are empty in a normal build: the production binary has no
// test-only flags (see crashhook_e2e.go for the e2e build's).
type testHooks struct{}

func (*testHooks) bindFlags(*cobra.Command) {}

func (testHooks) afterCreate() func(nodeClaim string) { return nil }
