//go:build !unix

package sim

import "os"

// flock is a no-op where flock(2) does not exist: only one controller may
// use a state file there.
func flock(*os.File, bool) error { return nil }
