package test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// Kill crashes the oldest running process of a name, its whole group,
// and leaves the newer one running; with none left running it says so.
func TestKillCrashesTheOldestRunningProcess(t *testing.T) {
	c := &Cluster{Root: t.TempDir()}
	if err := os.MkdirAll(c.Logs(), 0o750); err != nil {
		t.Fatal(err)
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	// sh waits on a child sleep: the group has two processes.
	for range 2 {
		if err := c.StartProcess("worker", sh, nil, "-c", "sleep 300 & wait"); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, p := range c.procs {
			_ = p.stop(0)
		}
	})
	first, second := c.procs[0], c.procs[1]
	if err := c.Kill("worker"); err != nil {
		t.Fatal(err)
	}
	if err := first.exited(); err == nil {
		t.Fatal("the oldest worker still runs")
	}
	var exit *exec.ExitError
	if !errors.As(first.err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("the oldest worker ended with %v, want SIGKILL", first.err)
	}
	if live := liveInGroup(first.cmd.Process.Pid); len(live) > 0 {
		t.Errorf("the oldest worker's group survived: %v", live)
	}
	if err := second.exited(); err != nil {
		t.Fatalf("the newer worker was killed too: %v", err)
	}
	if err := c.Kill("worker"); err != nil {
		t.Fatal(err)
	}
	if err := c.Kill("worker"); err == nil {
		t.Error("Kill with no worker running succeeded")
	}
}

// liveInGroup are the processes of group pgid that are not zombies (a
// killed child waits there to be reaped by init).
func liveInGroup(pgid int) []string {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var live []string
	for _, path := range stats {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces.
		fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
		if len(fields) > 2 && fields[2] == strconv.Itoa(pgid) && fields[0] != "Z" {
			live = append(live, path)
		}
	}
	return live
}
