package version

import (
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	for _, tc := range []struct {
		info Info
		want string
	}{
		{Info{Version: "v0.1.0", GitCommit: "abc", GoVersion: "go1.26", Platform: "linux/amd64"}, "capstan v0.1.0 (commit abc, go1.26, linux/amd64)"},
		{Info{Version: "devel", GoVersion: "go1.26", Platform: "linux/amd64"}, "capstan devel (commit unknown, go1.26, linux/amd64)"},
	} {
		if got := tc.info.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
}

func TestGetReportsTheToolchain(t *testing.T) {
	got := Get()
	if !strings.HasPrefix(got.GoVersion, "go") || got.Platform == "" || got.Version == "" {
		t.Errorf("Get() = %+v, want a version, Go version and platform", got)
	}
}
