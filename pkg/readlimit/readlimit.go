package readlimit

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// MaxDocumentBytes caps one YAML or JSON file or stream a user gives:
// simulate's manifests and stdin, and cloud profiles. Real ones are far
// smaller; the API server refuses requests over 3 MiB.
const MaxDocumentBytes = 64 << 20

// TooLargeError is a file or stream holding more than Limit bytes.
type TooLargeError struct {
	Limit int64
}

// Error implements error.
func (e *TooLargeError) Error() string {
	return fmt.Sprintf("larger than the %s limit", Size(e.Limit))
}

// NotRegularError is a path that names something other than a regular
// file; Mode says what.
type NotRegularError struct {
	Mode fs.FileMode
}

// Error implements error.
func (e *NotRegularError) Error() string {
	return fmt.Sprintf("not a regular file but %s", kind(e.Mode))
}

func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	default:
		return "an irregular file"
	}
}

// Size is n bytes for a message: in MiB or KiB when it is a whole number
// of them.
func Size(n int64) string {
	switch {
	case n > 0 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n > 0 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	default:
		return fmt.Sprintf("%d bytes", n)
	}
}

// All reads r to its end if it holds at most limit bytes, reading one
// more to tell; more is a *TooLargeError.
func All(r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &TooLargeError{Limit: limit}
	}
	return data, nil
}

// File reads the regular file at path if it holds at most limit bytes.
// Anything else at path is a *NotRegularError, found before reading: the
// file is opened without blocking (a named pipe with no writer would
// block the open) and its mode read from the open file, so it cannot be
// swapped in between. Errors do not repeat path beyond what os's own
// do; callers name the file, as in "reading cloud profile PATH, ...".
func File(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, &NotRegularError{Mode: info.Mode()}
	}
	return All(f, limit)
}

// Check reports whether path names a regular file of at most limit
// bytes, without reading it: for a file a library reads whole, such as
// client-go a kubeconfig. Anything else is a *NotRegularError, a larger
// file a *TooLargeError; a missing one is os.Stat's error. The file may
// change between the check and the library's read: it guards against
// mistakes and stray paths, not a writer racing the read.
func Check(path string, limit int64) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return &NotRegularError{Mode: info.Mode()}
	}
	if info.Size() > limit {
		return &TooLargeError{Limit: limit}
	}
	return nil
}
