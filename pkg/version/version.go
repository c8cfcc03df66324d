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

// Get reads the version from the module's build info: the module version
// for `go install …@vX`, else "devel" with the VCS revision Go stamped.
func Get() Info {
	info := Info{Version: "devel", GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return info
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		info.Version = v
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
