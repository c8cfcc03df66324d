package app

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/tools/clientcmd"
)

func TestKubeconfigPaths(t *testing.T) {
	sep := string(filepath.ListSeparator)
	// client-go reads ~/.kube/.kubeconfig whole, to migrate it, whenever
	// ~/.kube/config is missing, KUBECONFIG or not.
	migrated := filepath.Join(filepath.Dir(clientcmd.RecommendedHomeFile), ".kubeconfig")
	for _, tc := range []struct {
		env  string
		want []string
	}{
		{env: "/a", want: []string{"/a", migrated}},
		{env: "/a" + sep + "/b", want: []string{"/a", "/b", migrated}},
		{env: "/a" + sep + sep + "/b" + sep + "/a", want: []string{"/a", "/b", migrated}},
	} {
		t.Setenv("KUBECONFIG", tc.env)
		if diff := cmp.Diff(tc.want, kubeconfigPaths()); diff != "" {
			t.Errorf("KUBECONFIG=%s: paths (-want +got):\n%s", tc.env, diff)
		}
	}
}

// A kubeconfig client-go would read whole is refused, named, before it
// is read, by every command that loads one: a named pipe would block
// for good, /dev/zero never ends, a huge file fills memory.
func TestUnreadableKubeconfigIsRefused(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(dir, "huge")
	if err := os.WriteFile(huge, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// Sparse: no disk is used.
	if err := os.Truncate(huge, MaxKubeconfigBytes+1); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	sep := string(filepath.ListSeparator)
	for _, tc := range []struct {
		env, want string
	}{
		{env: fifo, want: "reading " + fifo + ", not a regular file but a named pipe"},
		{env: huge, want: "reading " + huge + ", larger than the 16 MiB limit"},
		// Every entry is checked, not just the first.
		{env: missing + sep + "/dev/zero", want: "reading /dev/zero, not a regular file but a character device"},
	} {
		t.Setenv("KUBECONFIG", tc.env)
		for _, args := range [][]string{
			{"explain", "pod", "default/x"},
			{"explain", "--controller-address=https://127.0.0.1:1", "pod", "default/x"},
			{"controller"},
		} {
			_, err := run(t, args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("KUBECONFIG=%s capstan %s: err = %v, want it to contain %q", tc.env, strings.Join(args, " "), err, tc.want)
			}
		}
	}
}
