//go:build e2e

package faults

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

// Compressed timings: the disruption suite's (evaluate every second,
// carry a decision out two seconds later) and garbage collection every
// 5 s for instances 10 s old.
const (
	pollInterval    = time.Second
	validationDelay = 2 * time.Second
	gcInterval      = 5 * time.Second
	gcGrace         = 10 * time.Second
	// leaderless is the longest the controller is gone after a crash: a
	// killed leader does not release its Lease, so its successor waits
	// for it to expire (controller-runtime's 15 s lease, retried every
	// 2 s), then starts its controllers.
	leaderless = 25 * time.Second
	// gcPeriod is how long the cloud and the NodeClaims may disagree:
	// garbage collection's interval and grace, plus the time no
	// controller runs after a crash.
	gcPeriod = gcInterval + gcGrace + leaderless
	// registrationTTL bounds how long a NodeClaim whose Node never
	// registers is kept. The simulated cloud registers a launched
	// instance's Node from inside the controller's process (a goroutine
	// waiting out the launch latency), so an instance launched just before
	// a crash never gets its Node: only this deletes its NodeClaim and
	// lets its pods be provisioned again (a real instance's kubelet would
	// register it regardless).
	registrationTTL = 30 * time.Second
)

// scenarios is how many tests run at once unless -parallel says
// otherwise: all of them (they mostly wait on the cluster).
const scenarios = 8

// controllerArgs start capstan: quick batches, the Drift gate on, the
// compressed disruption and garbage-collection timings. A restart after a
// crash uses the same.
func controllerArgs() []string {
	profile, _ := filepath.Abs("testdata/cloud-profile.yaml")
	return []string{"--cloud-profile=" + profile, "--batch-idle-duration=500ms", "--batch-max-duration=2s",
		"--feature-gates=Drift=true",
		"--disruption-poll-interval=" + pollInterval.String(),
		"--disruption-validation-delay=" + validationDelay.String(),
		"--disruption-replacement-timeout=60s", "--unavailable-offerings-ttl=20s",
		"--gc-interval=" + gcInterval.String(), "--gc-grace=" + gcGrace.String(),
		"--registration-ttl=" + registrationTTL.String()}
}

func TestMain(m *testing.M) {
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		_ = flag.Set("test.parallel", strconv.Itoa(scenarios))
	}
	log.SetLogger(klog.NewKlogr()) // the invariant checker's watching clients log through it
	os.Exit(test.MainWithCapstan(m, test.CapstanOptions{Args: func(*test.Cluster) []string { return controllerArgs() }},
		func(c *test.Cluster, _ string) { cluster = c }))
}
