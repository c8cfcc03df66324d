package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunWritesAFileThatChecks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "instancetypes.json")
	if err := run(path, false); err != nil {
		t.Fatalf("run(write) = %v", err)
	}
	if err := run(path, true); err != nil {
		t.Errorf("run(check) after writing = %v, want nil", err)
	}
}

func TestRunCheckRejects(t *testing.T) {
	for _, tc := range []struct {
		name    string
		content *string // nil: no file
		want    string
	}{
		{name: "missing file", want: "checking"},
		{name: "stale file", content: ptr("[]\n"), want: "is stale"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "instancetypes.json")
			if tc.content != nil {
				if err := os.WriteFile(path, []byte(*tc.content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			err := run(path, true)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("run(check) = %v, want an error containing %q", err, tc.want)
			}
			if tc.content != nil {
				if got, _ := os.ReadFile(path); string(got) != *tc.content {
					t.Errorf("check rewrote the file to %d bytes", len(got))
				}
			}
		})
	}
}

func ptr(s string) *string { return &s }
