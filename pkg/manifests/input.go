package manifests

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/capstan-dev/capstan/pkg/printable"
)

// MaxStreamBytes is the most Load reads from one file or stdin: more is
// refused rather than read until memory runs out. Manifests are far
// smaller; the API server refuses requests over 3 MiB.
const MaxStreamBytes = 64 << 20

// readCapped reads r whole if it holds at most limit bytes, reading one
// more to tell.
func readCapped(r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("larger than the %d MiB limit per file or stdin", limit>>20)
	}
	return data, nil
}

// inputErrors are what reading manifests found wrong. Their text echoes
// the input (names, keys, values, paths), so whatever does not print is
// escaped: a terminal would obey control sequences in it.
type inputErrors []error

// joinErrors is errs without the nils as inputErrors, or nil.
func joinErrors(errs []error) error {
	errs = slices.DeleteFunc(errs, func(err error) bool { return err == nil })
	if len(errs) == 0 {
		return nil
	}
	return inputErrors(errs)
}

// Error implements error: one line per error, as errors.Join.
func (e inputErrors) Error() string { return printable.Escape(errors.Join(e...).Error()) }

// Unwrap returns the errors, for errors.As.
func (e inputErrors) Unwrap() []error { return e }
