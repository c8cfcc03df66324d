package test

import "testing"

// The endpoint's URL is read from its log, which its stderr shares: the
// first finished line that is a URL, never a line still being written.
func TestPrintedURL(t *testing.T) {
	for _, tc := range []struct {
		name, log, want string
		ok              bool
	}{
		{name: "nothing yet", log: ""},
		{name: "half a line", log: "http://127.0.0.1:4"},
		{name: "the URL", log: "http://127.0.0.1:43121\n", want: "http://127.0.0.1:43121", ok: true},
		{name: "after a log line", log: "I1123 03:40:00 starting\nhttp://127.0.0.1:43121\nmore\n", want: "http://127.0.0.1:43121", ok: true},
		{name: "a log line mentioning a URL is not one", log: "fetching http://x\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := printedURL(tc.log)
			if got != tc.want || ok != tc.ok {
				t.Errorf("printedURL(%q) = %q, %v; want %q, %v", tc.log, got, ok, tc.want, tc.ok)
			}
		})
	}
}
