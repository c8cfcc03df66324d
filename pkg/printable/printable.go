package printable

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Escape is s with every rune that does not print, and every byte that is
// not UTF-8, written as a Go escape (\x1b, \r, \u202e); newlines stay, for
// text of several lines (errors joined one per line).
func Escape(s string) string { return escape(s, true) }

// Line is Escape for text that must stay on one line: newlines are
// escaped too, so a value cannot forge the lines that follow it.
func Line(s string) string { return escape(s, false) }

// Quote is s, or s quoted if some of it does not print, for a name in a
// message.
func Quote(s string) string {
	if prints(s) {
		return s
	}
	return strconv.Quote(s)
}

func escape(s string, keepNewlines bool) string {
	if keepNewlines && prints(strings.ReplaceAll(s, "\n", "")) || prints(s) {
		return s
	}
	var b strings.Builder
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		if r == '\n' && keepNewlines || strconv.IsPrint(r) && (r != utf8.RuneError || size > 1) {
			b.WriteString(s[:size])
		} else {
			q := strconv.Quote(s[:size])
			b.WriteString(q[1 : len(q)-1])
		}
		s = s[size:]
	}
	return b.String()
}

func prints(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return !strconv.IsPrint(r) })
}

// JSON is encoded JSON with every rune that does not print, other than
// the newlines and tabs between values, written as a \u escape: the same
// value, safe for a terminal. encoding/json escapes the ASCII controls
// inside strings but lets DEL, the C1 controls (U+009B starts a control
// sequence in some terminals) and bidirectional overrides through; a raw
// newline or tab in its output is layout, never a string's.
func JSON(data []byte) []byte {
	if prints(strings.NewReplacer("\n", "", "\t", "").Replace(string(data))) {
		return data
	}
	out := make([]byte, 0, len(data))
	for len(data) > 0 {
		r, size := utf8.DecodeRune(data)
		switch {
		case r == '\n' || r == '\t' || strconv.IsPrint(r) && (r != utf8.RuneError || size > 1):
			out = append(out, data[:size]...)
		case r > 0xffff:
			hi, lo := utf16.EncodeRune(r)
			out = fmt.Appendf(out, `\u%04x\u%04x`, hi, lo)
		default:
			out = fmt.Appendf(out, `\u%04x`, r)
		}
		data = data[size:]
	}
	return out
}
