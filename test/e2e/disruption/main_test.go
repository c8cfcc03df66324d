//go:build e2e

package disruption

import (
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/capstan-dev/capstan/pkg/test"
)

var cluster *test.Cluster

// metricsURL is the controller's metrics endpoint.
var metricsURL string

// Compressed disruption timings: the controller evaluates every second
// and carries a decision out two seconds after it made it (the reference
// polls every 10 s and validates after 15 s).
const (
	pollInterval    = time.Second
	validationDelay = 2 * time.Second
	// quiet is how long a scenario waits to show that nothing happens:
	// several rounds of planning and validation.
	quiet = 4 * (pollInterval + validationDelay)
	// unavailableTTL is how long an offering that ran out is avoided
	// (3 minutes by default).
	unavailableTTL = 20 * time.Second
	// gcInterval and gcGrace are garbage collection's (a minute each by
	// default): an instance leaked is terminated within gcPeriod, and a
	// NodeClaim whose instance is gone deleted within gcInterval, so the
	// guard lets the cloud and the NodeClaims disagree for gcPeriod.
	gcInterval = 30 * time.Second
	gcGrace    = time.Minute
	gcPeriod   = gcInterval + gcGrace
)

// scenarios is how many tests run at once unless -parallel says
// otherwise: all of them. They mostly wait on the cluster, so running
// them together costs no more than the longest (by default go test runs
// only GOMAXPROCS at once: two on CI's machines).
const scenarios = 24

// TestMain starts capstan with quick batches, the Drift and NodeRepair
// gates on, the
// compressed disruption timings and garbage collection every 30 s.
func TestMain(m *testing.M) {
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		_ = flag.Set("test.parallel", strconv.Itoa(scenarios))
	}
	log.SetLogger(klog.NewKlogr()) // the invariant checker's watching clients log through it
	os.Exit(test.MainWithCapstan(m, test.CapstanOptions{Args: func(*test.Cluster) []string { return controllerArgs() }},
		func(c *test.Cluster, metrics string) { cluster, metricsURL = c, metrics }))
}

// controllerArgs start capstan: quick batches, the Drift and NodeRepair
// gates on, the
// compressed disruption timings and garbage collection every 30 s. The
// parity checks run simulate with the same.
func controllerArgs() []string {
	profile, _ := filepath.Abs("testdata/cloud-profile.yaml")
	return []string{"--cloud-profile=" + profile, "--batch-idle-duration=500ms", "--batch-max-duration=2s",
		"--feature-gates=Drift=true,NodeRepair=true",
		"--disruption-poll-interval=" + pollInterval.String(),
		"--disruption-validation-delay=" + validationDelay.String(),
		"--disruption-replacement-timeout=60s", "--unavailable-offerings-ttl=" + unavailableTTL.String(),
		"--gc-interval=" + gcInterval.String(), "--gc-grace=" + gcGrace.String()}
}
