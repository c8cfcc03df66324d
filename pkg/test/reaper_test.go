package test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// clusterRoot makes a cluster root under the test's temp dir whose owner
// file names ownerPid.
func clusterRoot(t *testing.T, ownerPid int) string {
	t.Helper()
	root, err := os.MkdirTemp(t.TempDir(), clusterDirPrefix)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ownerFile), []byte(strconv.Itoa(ownerPid)), 0o600); err != nil {
		t.Fatal(err)
	}
	return root
}

// deadPid is the pid of a process that has exited and been waited for.
func deadPid(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// startMarked starts a process whose command line names path, as a
// control-plane component's names its cluster root. It is sh blocked in
// its builtin read on a pipe the test holds: no child process to leak, and
// it ends by itself should the test binary die. Cleanup kills it.
func startMarked(t *testing.T, path string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", "read -r line", path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = stdin.Close()
		_ = cmd.Wait()
	})
	return cmd
}

func TestClusterDirPattern(t *testing.T) {
	cases := []struct {
		name    string
		cmdline string
		want    string
	}{
		{name: "flag value", cmdline: "/x/etcd --data-dir=/tmp/capstan-cluster-123/etcd", want: "/tmp/capstan-cluster-123"},
		{name: "separate argument", cmdline: "/x/kube-apiserver --cert-dir /var/tmp/capstan-cluster-42/apiserver --v=2", want: "/var/tmp/capstan-cluster-42"},
		{name: "at the end", cmdline: "kwok --config=/tmp/capstan-cluster-7", want: "/tmp/capstan-cluster-7"},
		{name: "nested under a test temp dir", cmdline: "/bin/sh -c read /tmp/TestX99/001/capstan-cluster-55/marker", want: "/tmp/TestX99/001/capstan-cluster-55"},
		{name: "the binary inside the root", cmdline: "/tmp/capstan-cluster-8/bin/etcd --name=x", want: "/tmp/capstan-cluster-8"},
		{name: "the first of several roots", cmdline: "x --a=/tmp/capstan-cluster-1/a --b=/tmp/capstan-cluster-2/b", want: "/tmp/capstan-cluster-1"},
		{name: "no root", cmdline: "/usr/bin/sleep 30"},
		{name: "no number", cmdline: "x --dir=/tmp/capstan-cluster-abc/etcd"},
		{name: "not an absolute path", cmdline: "x --dir=capstan-cluster-1/etcd"},
		{name: "other prefix", cmdline: "x --dir=/tmp/capstan-clusters-1/etcd"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got string
			if m := clusterDirPattern.FindStringSubmatch(tc.cmdline); m != nil {
				got = m[1]
			}
			if got != tc.want {
				t.Errorf("root of %q = %q, want %q", tc.cmdline, got, tc.want)
			}
		})
	}
}

func TestReferences(t *testing.T) {
	const root = "/tmp/capstan-cluster-12"
	cases := []struct {
		name    string
		cmdline string
		root    string
		want    bool
	}{
		{name: "inside the root", cmdline: "etcd --data-dir=/tmp/capstan-cluster-12/etcd", root: root, want: true},
		{name: "the root at the end", cmdline: "kwok --root=/tmp/capstan-cluster-12", root: root, want: true},
		{name: "the root then a space", cmdline: "kwok /tmp/capstan-cluster-12 --v=2", root: root, want: true},
		{name: "another root it is a prefix of", cmdline: "etcd --data-dir=/tmp/capstan-cluster-123/etcd", root: root},
		{name: "both roots", cmdline: "x /tmp/capstan-cluster-123/a /tmp/capstan-cluster-12/b", root: root, want: true},
		{name: "no mention", cmdline: "sleep 30", root: root},
		{name: "empty command line", root: root},
		{name: "empty root", cmdline: "sleep 30"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := references(tc.cmdline, tc.root); got != tc.want {
				t.Errorf("references(%q, %q) = %v, want %v", tc.cmdline, tc.root, got, tc.want)
			}
		})
	}
}

func TestOwnerAlive(t *testing.T) {
	self := strconv.Itoa(os.Getpid())
	cases := []struct {
		name  string
		owner *string // nil: no owner file
		want  bool
	}{
		{name: "this process", owner: ptrTo(self), want: true},
		{name: "this process, with whitespace", owner: ptrTo(" " + self + "\n"), want: true},
		// pid 1 lives; unless we are root it is another user's (EPERM).
		{name: "init", owner: ptrTo("1"), want: true},
		{name: "a process that exited", owner: ptrTo(strconv.Itoa(deadPid(t)))},
		{name: "no owner file"},
		{name: "empty owner file", owner: ptrTo("")},
		{name: "not a number", owner: ptrTo("abc")},
		// kill(0, 0) and kill(-1, 0) would probe groups, and succeed.
		{name: "pid 0", owner: ptrTo("0")},
		{name: "pid -1", owner: ptrTo("-1")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			if tc.owner != nil {
				if err := os.WriteFile(filepath.Join(root, ownerFile), []byte(*tc.owner), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if got := ownerAlive(root); got != tc.want {
				t.Errorf("ownerAlive = %v, want %v", got, tc.want)
			}
		})
	}
}

func ptrTo(s string) *string { return &s }

func TestProcessesOf(t *testing.T) {
	root := clusterRoot(t, os.Getpid())
	marked := startMarked(t, filepath.Join(root, "etcd"))
	other := clusterRoot(t, os.Getpid())
	cases := []struct {
		name string
		root string
		want []int
	}{
		{name: "the process naming the root", root: root, want: []int{marked.Process.Pid}},
		{name: "a root nothing names", root: other},
		{name: "a prefix of the root, as another cluster's root", root: root[:len(root)-1]},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ProcessesOf(tc.root)); diff != "" {
				t.Errorf("ProcessesOf(%s) (-want +got):\n%s", tc.root, diff)
			}
		})
	}
}

func TestReapOrphansKillsOnlyProcessesOfDeadOwners(t *testing.T) {
	orphaned := clusterRoot(t, deadPid(t))
	owned := clusterRoot(t, os.Getpid())
	orphan := startMarked(t, filepath.Join(orphaned, "etcd"))
	survivor := startMarked(t, filepath.Join(owned, "etcd"))

	killed, err := ReapOrphans()
	if err != nil {
		t.Fatalf("ReapOrphans: %v", err)
	}
	if !slices.Contains(killed, orphan.Process.Pid) {
		t.Errorf("killed %v, want the orphan %d among them", killed, orphan.Process.Pid)
	}
	if slices.Contains(killed, survivor.Process.Pid) {
		t.Errorf("killed %v, including %d whose owner lives", killed, survivor.Process.Pid)
	}
	var exitErr *exec.ExitError
	if err := orphan.Wait(); !errors.As(err, &exitErr) || exitErr.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("orphan ended with %v, want SIGKILL", err)
	}
	if _, err := os.Stat(orphaned); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("orphaned root %s not removed (%v)", orphaned, err)
	}
	if _, err := os.Stat(filepath.Join(owned, ownerFile)); err != nil {
		t.Errorf("owned root damaged: %v", err)
	}
	if diff := cmp.Diff([]int{survivor.Process.Pid}, ProcessesOf(owned)); diff != "" {
		t.Errorf("processes of the owned root (-want +got):\n%s", diff)
	}
}
