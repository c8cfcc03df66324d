package parity

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/capstan-dev/capstan/cmd/capstan/app"
	"github.com/capstan-dev/capstan/pkg/simulator"
)

// Simulate runs `capstan simulate -o json` in process on the script's
// manifests, timed from origin, for duration, with the flags of controllerArgs (the
// scenario's controller's) that simulate also has — its cloud profile,
// batch windows, unavailable-offerings TTL, disruption timings and
// feature gates — so both run with the same settings. dir receives the
// manifests (a test's TempDir), for a failure to point at.
func Simulate(ctx context.Context, s *Script, origin time.Time, controllerArgs []string, duration time.Duration, dir string) (*simulator.Result, error) {
	data, err := s.YAML(origin)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "manifests.yaml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return nil, fmt.Errorf("writing the scenario's manifests, %w", err)
	}
	cmd := app.NewCommand()
	simulate, _, err := cmd.Find([]string{"simulate"})
	if err != nil {
		return nil, fmt.Errorf("finding the simulate command, %w", err)
	}
	args := []string{"simulate", "-o", "json", "--duration", duration.String(), "-f", path}
	for _, arg := range controllerArgs {
		name, _, _ := strings.Cut(strings.TrimPrefix(arg, "--"), "=")
		if strings.HasPrefix(arg, "--") && simulate.Flags().Lookup(name) != nil {
			args = append(args, arg)
		}
	}
	var out, errOut bytes.Buffer
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	if err := cmd.ExecuteContext(ctx); err != nil {
		return nil, fmt.Errorf("capstan %s: %w (%s)", strings.Join(args, " "), err, strings.TrimSpace(errOut.String()))
	}
	var result simulator.Result
	if err := json.Unmarshal(out.Bytes(), &result); err != nil {
		return nil, fmt.Errorf("reading simulate's json, %w", err)
	}
	return &result, nil
}
