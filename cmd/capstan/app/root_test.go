package app

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := NewCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

func TestVersion(t *testing.T) {
	out, err := run(t, "version")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "capstan ") {
		t.Errorf("version printed %q", out)
	}

	out, err = run(t, "version", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var decoded map[string]string
	if err := json.Unmarshal([]byte(out), &decoded); err != nil || decoded["goVersion"] == "" {
		t.Errorf("version -o json printed %q (%v)", out, err)
	}

	if _, err := run(t, "version", "-o", "yaml"); err == nil || !strings.Contains(err.Error(), "unknown output format") {
		t.Errorf("version -o yaml: err = %v, want an unknown format error", err)
	}
}
