package manifests

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// endless is stdin that never ends.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '#'
	}
	return len(p), nil
}

// A file or stdin over MaxStreamBytes is refused, not read to the end.
func TestLoadRefusesOversizedStreams(t *testing.T) {
	_, err := Load([]string{"-"}, endless{})
	if want := "reading stdin, larger than the 64 MiB limit"; err == nil || err.Error() != want {
		t.Errorf("error = %v, want %s", err, want)
	}
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// Sparse: no disk is used.
	if err := os.Truncate(big, MaxStreamBytes+1); err != nil {
		t.Fatal(err)
	}
	_, err = Load([]string{dir}, nil)
	if want := "reading " + big + ", larger than the 64 MiB limit"; err == nil || err.Error() != want {
		t.Errorf("error = %v, want %s", err, want)
	}
}

// A named pipe among a directory's manifests is refused, not read: with
// no writer the read would block for good. So is a device named itself.
func TestLoadRefusesFilesThatAreNotRegular(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.yaml"), []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "b.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Load([]string{dir, "/dev/zero"}, nil)
	want := "reading " + fifo + ", not a regular file but a named pipe\nreading /dev/zero, not a regular file but a character device"
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %s", err, want)
	}
}

// hasControl reports whether s holds a rune a terminal would not print,
// newlines apart.
func hasControl(s string) bool {
	return !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return r != '\n' && !unicode.IsPrint(r) })
}

// What the input says is echoed with its control characters escaped,
// so a manifest cannot send a terminal escape sequences; names that do
// not print are quoted.
func TestErrorsEscapeControlCharacters(t *testing.T) {
	const profile = "apiVersion: sim.capstan.dev/v1alpha1\nkind: CloudProfile\n"
	l := newLoader(t)
	for _, tc := range []struct {
		name, data, want string
	}{
		{"a name", `{apiVersion: v1, kind: Pod, metadata: {name: "w\e[31m"}, spec: {containers: [{name: c}]}}`,
			`x.yaml, document 1 (Pod "w\x1b[31m"): metadata.name: Invalid value: "w\x1b[31m": a lowercase RFC 1123 subdomain`},
		{"a name on two lines", `{apiVersion: v1, kind: Pod, metadata: {name: "a\nb"}, spec: {containers: [{name: c}]}}`,
			`x.yaml, document 1 (Pod "a\nb"): metadata.name: Invalid value: "a\nb"`},
		{"an unknown field", `{apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {"contain\eers": []}}`,
			`x.yaml, document 1 (Pod p): strict decoding error: unknown field "spec.contain\x1bers"`},
		{"a resource name", `{apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: c, resources: {requests: {"cpu\e": 1}}}]}}`,
			`x.yaml, document 1 (Pod p): spec.containers[0].resources.requests[cpu\x1b]: Invalid value: "cpu\u001b"`},
		{"a right-to-left override", `{apiVersion: v1, kind: Pod, metadata: {name: p, labels: {a: "\u202e"}}, spec: {containers: [{name: c}]}}`,
			`x.yaml, document 1 (Pod p): metadata.labels: Invalid value: "\u202e"`},
		{"a CloudProfile's unknown field", profile + "spec: {\"reg\\eion\": us-west-2}\n",
			`decoding x.yaml, document 1 (CloudProfile), strict decoding error: unknown field "spec.reg\x1bion"`},
		{"a CloudProfile's name, twice", profile + "metadata: {name: \"c\\e\"}\n---\n" + profile + "metadata: {name: \"c\\e\"}\n",
			`x.yaml, document 2 (CloudProfile "c\x1b"): metadata.name: Duplicate value: "c\x1b": CloudProfile "c\x1b" is already in x.yaml, document 1`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := l.Read("x.yaml", []byte(tc.data), &Set{})
			if err == nil {
				t.Fatal("no error")
			}
			if hasControl(err.Error()) {
				t.Errorf("error %q has control characters", err)
			}
			if !hasLinePrefix(err.Error(), tc.want) {
				t.Errorf("error:\n%v\nhas no line starting %s", err, tc.want)
			}
		})
	}
}

// File names are input too: a hostile repository names its files.
func TestLoadEscapesPaths(t *testing.T) {
	dir := writeFiles(t, map[string]string{"a\x1b[2J.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"})
	missing := filepath.Join(dir, "gone\x07")
	_, err := Load([]string{dir, missing}, nil)
	if err == nil {
		t.Fatal("no error")
	}
	want := []string{
		`"` + dir + `/a\x1b[2J.yaml", document 1 (Pod p): spec.containers: Required value`,
		`reading "` + dir + `/gone\a", stat ` + dir + `/gone\a: no such file or directory`,
	}
	if diff := cmp.Diff(want, strings.Split(err.Error(), "\n")); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

func TestSkippedString(t *testing.T) {
	s := Skipped{Source: "x.yaml, document 1", APIVersion: "v1", Kind: "Evil\x1b[2J", Name: "n"}
	if got, want := s.String(), `x.yaml, document 1 ("Evil\x1b[2J" n)`; got != want {
		t.Errorf("String() = %s, want %s", got, want)
	}
}
