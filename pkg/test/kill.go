package test

import (
	"errors"
	"fmt"
	"syscall"
)

// Kill crashes the oldest still-running process started under name (by
// StartProcess or StartCapstan): SIGKILL to its whole process group, with
// no chance to clean up (a leader-election Lease is not released, a
// half-done write stays half done), and waits for it to end. With one
// process under name that is the process; with several (a standby
// started after it), the oldest is the incumbent, the one that has held
// the lease longest. Starting name again (StartCapstan with the same
// arguments) is a restart after a crash.
func (c *Cluster) Kill(name string) error {
	for _, p := range c.procs {
		if p.name != name {
			continue
		}
		select {
		case <-p.done:
			continue
		default:
		}
		return p.kill()
	}
	return fmt.Errorf("no running process %s", name)
}

// kill sends SIGKILL to the process's group and waits for the process.
func (p *process) kill() error {
	if err := syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("killing %s's process group, %w", p.name, err)
	}
	<-p.done
	return nil
}
