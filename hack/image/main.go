package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"

	"github.com/capstan-dev/capstan/pkg/version"
)

func main() {
	binary := flag.String("binary", "bin/image/capstan", "the static capstan binary to put in the image")
	chart := flag.String("chart", "charts/capstan/Chart.yaml", "the chart whose appVersion tags the image")
	repository := flag.String("repository", "capstan", "the image's repository, as the chart's image.repository")
	arch := flag.String("arch", runtime.GOARCH, "the binary's architecture")
	out := flag.String("o", "bin/capstan-image.tar", "the OCI archive to write")
	flag.Parse()
	if err := run(*binary, *chart, *repository, *arch, *out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(binary, chart, repository, arch, out string) error {
	tag, err := appVersion(chart)
	if err != nil {
		return err
	}
	if arch == runtime.GOARCH {
		if err := checkVersion(binary, tag); err != nil {
			return err
		}
	}
	bin, err := os.ReadFile(binary)
	if err != nil {
		return fmt.Errorf("reading binary, %w", err)
	}
	img, err := Build(bin, Config{Arch: arch, Version: tag, Ref: repository + ":" + tag})
	if err != nil {
		return err
	}
	if err := os.WriteFile(out, img.Archive, 0o644); err != nil {
		return fmt.Errorf("writing %s, %w", out, err)
	}
	fmt.Printf("%s %s@%s\n", out, repository+":"+tag, img.Digest)
	return nil
}

var appVersionLine = regexp.MustCompile(`(?m)^appVersion:\s*"?([^"\s]+)"?\s*$`)

// appVersion reads the chart's appVersion, the image's tag.
func appVersion(chart string) (string, error) {
	data, err := os.ReadFile(chart)
	if err != nil {
		return "", fmt.Errorf("reading chart, %w", err)
	}
	m := appVersionLine.FindSubmatch(data)
	if m == nil {
		return "", fmt.Errorf("%s has no appVersion", chart)
	}
	return string(m[1]), nil
}

// checkVersion runs `binary version -o json`: the image must run the
// version its tag names.
func checkVersion(binary, want string) error {
	outb, err := exec.Command(binary, "version", "-o", "json").Output() //nolint:gosec // the binary make image just built
	if err != nil {
		return fmt.Errorf("running %s version, %w", binary, err)
	}
	var info version.Info
	if err := json.Unmarshal(outb, &info); err != nil {
		return fmt.Errorf("decoding %s version, %w", binary, err)
	}
	if info.Version != want {
		return errors.New("binary reports version " + info.Version + ", the chart's appVersion is " + want + ": build it with -ldflags -X github.com/capstan-dev/capstan/pkg/version.version=" + want)
	}
	return nil
}
