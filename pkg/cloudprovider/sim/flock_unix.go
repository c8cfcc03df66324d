//go:build unix

package sim

import (
	"errors"
	"os"
	"syscall"
)

// flock takes (exclusive) or drops an advisory lock on f, retrying when a
// signal interrupts the wait.
func flock(f *os.File, exclusive bool) error {
	how := syscall.LOCK_UN
	if exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
