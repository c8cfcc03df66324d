package readlimit

import (
	"crypto/rand"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAll(t *testing.T) {
	for _, tc := range []struct {
		data    string
		wantErr string
	}{
		{data: ""},
		{data: "abcd"},
		{data: "abcde", wantErr: "larger than the 4 bytes limit"},
	} {
		data, err := All(strings.NewReader(tc.data), 4)
		if got := errText(err); got != tc.wantErr || (err == nil && string(data) != tc.data) {
			t.Errorf("All(%q, 4) = %q, %q; want %q, %q", tc.data, data, got, tc.data, tc.wantErr)
		}
	}
	// A stream that never ends is cut at the cap.
	var tooLarge *TooLargeError
	if _, err := All(rand.Reader, MaxDocumentBytes); !errors.As(err, &tooLarge) || tooLarge.Limit != MaxDocumentBytes {
		t.Errorf("All(endless) = %v, want a *TooLargeError at %d", err, MaxDocumentBytes)
	}
}

// testFiles are files of 2, 4, 5 and 2^40 bytes (sparse: no disk is
// used), a named pipe, a symbolic link to the small file, and their
// directory.
type testFiles struct{ dir, small, exact, over, huge, fifo, link string }

func newTestFiles(t *testing.T) testFiles {
	t.Helper()
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	small, exact, over := write("small", "ab"), write("exact", "abcd"), write("over", "abcde")
	huge := write("huge", "")
	if err := os.Truncate(huge, 1<<40); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(small, link); err != nil {
		t.Fatal(err)
	}
	return testFiles{dir: dir, small: small, exact: exact, over: over, huge: huge, fifo: fifo, link: link}
}

func TestFile(t *testing.T) {
	tf := newTestFiles(t)
	dir, small, exact, over, huge, fifo, link := tf.dir, tf.small, tf.exact, tf.over, tf.huge, tf.fifo, tf.link
	for _, tc := range []struct {
		path, want, wantErr string
	}{
		{path: small, want: "ab"},
		{path: exact, want: "abcd"},
		{path: link, want: "ab"},
		{path: over, wantErr: "larger than the 4 bytes limit"},
		{path: huge, wantErr: "larger than the 4 bytes limit"},
		// A named pipe with no writer would block the open and the read.
		{path: fifo, wantErr: "not a regular file but a named pipe"},
		{path: "/dev/zero", wantErr: "not a regular file but a character device"},
		{path: dir, wantErr: "not a regular file but a directory"},
		{path: filepath.Join(dir, "missing"), wantErr: "open " + filepath.Join(dir, "missing") + ": no such file or directory"},
	} {
		data, err := File(tc.path, 4)
		if diff := cmp.Diff(tc.wantErr, errText(err)); diff != "" {
			t.Errorf("File(%s) error (-want +got):\n%s", tc.path, diff)
		}
		if string(data) != tc.want {
			t.Errorf("File(%s) = %q, want %q", tc.path, data, tc.want)
		}
	}
	var notRegular *NotRegularError
	if _, err := File(fifo, 4); !errors.As(err, &notRegular) || notRegular.Mode&fs.ModeNamedPipe == 0 {
		t.Errorf("File(fifo) = %v, want a *NotRegularError for a named pipe", err)
	}
}

// Check tells what File would refuse, without opening the file.
func TestCheck(t *testing.T) {
	tf := newTestFiles(t)
	for _, tc := range []struct {
		path, wantErr string
	}{
		{path: tf.small},
		{path: tf.exact},
		{path: tf.link},
		{path: tf.over, wantErr: "larger than the 4 bytes limit"},
		{path: tf.huge, wantErr: "larger than the 4 bytes limit"},
		{path: tf.fifo, wantErr: "not a regular file but a named pipe"},
		{path: "/dev/zero", wantErr: "not a regular file but a character device"},
		{path: tf.dir, wantErr: "not a regular file but a directory"},
		{path: filepath.Join(tf.dir, "missing"), wantErr: "stat " + filepath.Join(tf.dir, "missing") + ": no such file or directory"},
	} {
		if diff := cmp.Diff(tc.wantErr, errText(Check(tc.path, 4))); diff != "" {
			t.Errorf("Check(%s) error (-want +got):\n%s", tc.path, diff)
		}
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0 bytes", 100: "100 bytes", 1 << 10: "1 KiB", 1536: "1536 bytes", 64 << 20: "64 MiB", 3 << 10 << 10: "3 MiB"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
