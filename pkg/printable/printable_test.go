package printable

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEscape(t *testing.T) {
	for _, tc := range []struct {
		name, in, escape, line, quote string
	}{
		{"plain", "web-0 … ok", "web-0 … ok", "web-0 … ok", "web-0 … ok"},
		{"clear screen", "a\x1b[2Jb", `a\x1b[2Jb`, `a\x1b[2Jb`, `"a\x1b[2Jb"`},
		{"carriage return", "ok\rforged", `ok\rforged`, `ok\rforged`, `"ok\rforged"`},
		{"OSC title", "\x1b]0;owned\x07", `\x1b]0;owned\a`, `\x1b]0;owned\a`, `"\x1b]0;owned\a"`},
		{"C1 control sequence introducer", "a\u009b2J", `a\u009b2J`, `a\u009b2J`, `"a\u009b2J"`},
		{"right-to-left override", "a\u202eb", `a\u202eb`, `a\u202eb`, `"a\u202eb"`},
		{"not UTF-8", "a\xffb", `a\xffb`, `a\xffb`, `"a\xffb"`},
		{"newlines", "one\ntwo", "one\ntwo", `one\ntwo`, `"one\ntwo"`},
		{"newline and escape", "one\n\x1b", "one\n\\x1b", `one\n\x1b`, `"one\n\x1b"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := []string{Escape(tc.in), Line(tc.in), Quote(tc.in)}
			if diff := cmp.Diff([]string{tc.escape, tc.line, tc.quote}, got); diff != "" {
				t.Errorf("Escape, Line, Quote (-want +got):\n%s", diff)
			}
		})
	}
}

// JSON keeps the value and the layout, escaping what encoding/json lets
// through.
func TestJSON(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"plain", "web-0 … ok", "{\n\t\"s\": \"web-0 … ok\"\n}"},
		{"ASCII controls, escaped by encoding/json", "\x1b[2J\r", "{\n\t\"s\": \"\\u001b[2J\\r\"\n}"},
		{"DEL and C1", "a\x7f\u009b2J", "{\n\t\"s\": \"a\\u007f\\u009b2J\"\n}"},
		{"right-to-left override", "a\u202eb", "{\n\t\"s\": \"a\\u202eb\"\n}"},
		{"beyond the basic plane", "a\U000e0001b", "{\n\t\"s\": \"a\\udb40\\udc01b\"\n}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := json.MarshalIndent(map[string]string{"s": tc.in}, "", "\t")
			if err != nil {
				t.Fatal(err)
			}
			got := JSON(data)
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("JSON (-want +got):\n%s", diff)
			}
			var back map[string]string
			if err := json.Unmarshal(got, &back); err != nil || back["s"] != tc.in {
				t.Errorf("decodes to %q, %v; want %q", back["s"], err, tc.in)
			}
		})
	}
}
