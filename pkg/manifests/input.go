package manifests

import (
	"errors"
	"slices"

	"github.com/capstan-dev/capstan/pkg/printable"

	"github.com/capstan-dev/capstan/pkg/readlimit"
)

// MaxStreamBytes is the most Load reads from one file or stdin: more is
// refused rather than read until memory runs out.
const MaxStreamBytes = readlimit.MaxDocumentBytes

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
