package manifests

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

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
func (e inputErrors) Error() string { return escape(errors.Join(e...).Error()) }

// Unwrap returns the errors, for errors.As.
func (e inputErrors) Unwrap() []error { return e }

// escape writes every rune of s that does not print, and bytes that are
// not UTF-8, as Go escapes (\x1b, \u202e); newlines, which separate
// errors, stay.
func escape(s string) string {
	if prints(strings.ReplaceAll(s, "\n", "")) {
		return s
	}
	var b strings.Builder
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		if r == '\n' || strconv.IsPrint(r) && (r != utf8.RuneError || size > 1) {
			b.WriteString(s[:size])
		} else {
			q := strconv.Quote(s[:size])
			b.WriteString(q[1 : len(q)-1])
		}
		s = s[size:]
	}
	return b.String()
}

// printable is s, or s quoted if some of it does not print, for a name
// from the input in a message.
func printable(s string) string {
	if prints(s) {
		return s
	}
	return strconv.Quote(s)
}

func prints(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return !strconv.IsPrint(r) })
}
