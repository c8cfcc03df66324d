package test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clusterDirPrefix names every local cluster's root directory. Each
// component's command line references its cluster's root, which is how the
// reaper finds processes that outlived the test that started them.
const clusterDirPrefix = "capstan-cluster-"

var clusterDirPattern = regexp.MustCompile(`(/[^\s\x00=]*/` + clusterDirPrefix + `[0-9]+)`)

// ownerFile records the pid of the process that owns a cluster root.
const ownerFile = "owner.pid"

// ProcessesOf lists the pids of processes whose command line references
// the cluster root dir.
func ProcessesOf(root string) []int {
	var pids []int
	for pid, cmdline := range processCommandLines() {
		if references(cmdline, root) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// references reports whether cmdline mentions root itself rather than only
// as the start of a longer cluster root: cluster roots differ only in their
// number, so capstan-cluster-12 must not match capstan-cluster-123.
func references(cmdline, root string) bool {
	if root == "" {
		return false
	}
	for {
		i := strings.Index(cmdline, root)
		if i < 0 {
			return false
		}
		cmdline = cmdline[i+len(root):]
		if cmdline == "" || cmdline[0] < '0' || cmdline[0] > '9' {
			return true
		}
	}
}

// ReapOrphans kills the processes of local clusters whose owner is gone (a
// test binary that crashed or was killed before its cleanup ran) and
// removes their directories. It returns the pids it killed.
func ReapOrphans() ([]int, error) {
	var killed []int
	var errs []error
	roots := map[string]bool{}
	for pid, cmdline := range processCommandLines() {
		m := clusterDirPattern.FindStringSubmatch(cmdline)
		if m == nil || pid == os.Getpid() {
			continue
		}
		root := m[1]
		if ownerAlive(root) {
			continue
		}
		roots[root] = true
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			errs = append(errs, fmt.Errorf("killing orphan %d of %s, %w", pid, root, err))
			continue
		}
		killed = append(killed, pid)
	}
	for root := range roots {
		if err := waitGone(root, 10*time.Second); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := os.RemoveAll(root); err != nil {
			errs = append(errs, fmt.Errorf("removing %s, %w", root, err))
		}
	}
	return killed, errors.Join(errs...)
}

func ownerAlive(root string) bool {
	data, err := os.ReadFile(filepath.Join(root, ownerFile))
	if err != nil {
		return false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	// kill(0) and kill(-1) would probe process groups, not a process.
	if err != nil || pid <= 0 {
		return false
	}
	// EPERM: the owner lives but belongs to another user.
	err = syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// waitGone waits until no process references root.
func waitGone(root string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		pids := ProcessesOf(root)
		if len(pids) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("processes %v of %s still running", pids, root)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// processCommandLines maps every visible pid to its command line, with
// arguments joined by spaces. Zombies (empty command lines) are skipped.
func processCommandLines() map[int]string {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	out := map[int]string{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(data) == 0 {
			continue
		}
		out[pid] = strings.ReplaceAll(string(data), "\x00", " ")
	}
	return out
}
