package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Info describes the running binary.
type Info struct {
	Version   string `json:"version"`
	GitCommit string `json:"gitCommit"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// version is the release, stamped at link time by `make build` and `make
// image` (-ldflags -X …/pkg/version.version=…) from the chart's appVersion,
// so an image's `capstan version` is the tag the chart deploys by default.
var version string

// Get reads the version stamped at link time, else the module version
// from the build info (`go install …@vX`), else "devel"; and the VCS
// revision Go stamped.
func Get() Info {
	info := Info{Version: "devel", GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	switch {
	case version != "":
		info.Version = version
	case ok && bi.Main.Version != "" && bi.Main.Version != "(devel)":
		info.Version = bi.Main.Version
	}
	if !ok {
		return info
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.GitCommit = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				info.GitCommit += "-dirty"
			}
		}
	}
	return info
}

// String is the one-line form `capstan version` prints.
func (i Info) String() string {
	commit := i.GitCommit
	if commit == "" {
		commit = "unknown"
	}
	return fmt.Sprintf("capstan %s (commit %s, %s, %s)", i.Version, commit, i.GoVersion, i.Platform)
}
