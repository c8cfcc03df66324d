package simulator_test

import (
	"strings"
	"testing"
	"time"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/manifests"
	"github.com/capstan-dev/capstan/pkg/simulator"
)

// faultsManifests are a NodePool of m5.large (capacity types as given),
// its SimNodeClass, three one-CPU pods and a cloud profile with the
// launch faults.
func faultsManifests(t *testing.T, capacityTypes, faults string) *manifests.Set {
	t.Helper()
	doc := `apiVersion: sim.capstan.dev/v1alpha1
kind: CloudProfile
metadata: {name: faults}
spec:
  zones: [us-west-2a, us-west-2b]
  launchLatency: 10s
  launchFaults:
` + faults + `
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: faults}
spec:
  template:
    spec:
      requirements:
      - {key: node.kubernetes.io/instance-type, operator: In, values: [m5.xlarge]}
      - {key: karpenter.sh/capacity-type, operator: In, values: ` + capacityTypes + `}
      nodeClassRef: {group: sim.capstan.dev, kind: SimNodeClass, name: faults}
---
apiVersion: sim.capstan.dev/v1alpha1
kind: SimNodeClass
metadata: {name: faults}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: inflate, namespace: default}
spec:
  replicas: 3
  selector: {matchLabels: {app: inflate}}
  template:
    metadata: {labels: {app: inflate}}
    spec:
      containers:
      - name: pause
        image: registry.k8s.io/pause:3.10
        resources: {requests: {cpu: "1"}}
`
	set, err := manifests.Load([]string{"-"}, strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// A launch refused for a configuration reason goes as in the cluster
// (the same lifecycle steps): Launched=False and a LaunchFailed event
// naming the code, retries with backoff, the NodeClaim deleted at the
// launch timeout and its pods planned again, and a node once the fault
// ends.
func TestSimulatedRefusalTimesOutThenLaunches(t *testing.T) {
	set := faultsManifests(t, "[on-demand]", "  - {code: UnauthorizedOperation, until: 7m}")
	r := run(t, set, func(o *simulator.Options) { o.Duration = 20 * time.Minute })
	failed := eventsOf(r, "LaunchFailed")
	if len(failed) < 2 {
		t.Fatalf("%d LaunchFailed events, want the first attempt and its retries", len(failed))
	}
	for _, e := range failed {
		if !strings.Contains(e.Message, "UnauthorizedOperation") {
			t.Errorf("LaunchFailed at %s does not name the code: %s", e.At, e.Message)
		}
	}
	// Retries are a backoff apart, not every round: 1s, 2s, 4s ... after
	// the first failure.
	if first, second := at(t, failed[0].At), at(t, failed[1].At); second-first != time.Second {
		t.Errorf("first retry %s after the first failure, want 1s", second-first)
	}
	timeouts := eventsOf(r, "LaunchTimeout")
	if len(timeouts) == 0 || timeouts[0].Object != failed[0].Object {
		t.Fatalf("launch timeouts %+v, want the first NodeClaim's", timeouts)
	}
	if got, want := at(t, timeouts[0].At)-at(t, failed[0].At), 5*time.Minute; got != want {
		t.Errorf("deleted %s after its first failure, want the launch timeout %s", got, want)
	}
	if len(r.Nodes) == 0 {
		t.Fatal("no node launched once the fault ended")
	}
	for _, n := range r.Nodes {
		if at(t, n.LaunchedAt) < 7*time.Minute {
			t.Errorf("node %s launched at %s, while the fault was in force", n.Name, n.LaunchedAt)
		}
	}
	if r.Summary.PodsPending != 0 {
		t.Errorf("%d pods pending at the end", r.Summary.PodsPending)
	}
}

// A spot launch refused for the service-linked role falls back to
// on-demand at once, with the event that says why.
func TestSimulatedSpotServiceLinkedRoleFallsBack(t *testing.T) {
	set := faultsManifests(t, "[spot, on-demand]", "  - {code: AuthFailure.ServiceLinkedRoleCreationNotPermitted, capacityType: spot}")
	r := run(t, set, func(o *simulator.Options) { o.Duration = 5 * time.Minute })
	if len(eventsOf(r, "SpotServiceLinkedRoleCreationFailed")) == 0 {
		t.Error("no SpotServiceLinkedRoleCreationFailed event")
	}
	if n := len(eventsOf(r, "LaunchTimeout")) + len(eventsOf(r, "LaunchFailed")); n > 0 {
		t.Errorf("%d launch failures or timeouts: the fallback should be at once", n)
	}
	if len(r.Nodes) == 0 {
		t.Fatal("no node launched")
	}
	for _, n := range r.Nodes {
		if n.CapacityType != v1.CapacityTypeOnDemand || at(t, n.LaunchedAt) > 30*time.Second {
			t.Errorf("node %s: %s at %s, want on-demand within the first batch", n.Name, n.CapacityType, n.LaunchedAt)
		}
	}
}

// A launch fault's message from the profile reaches the text summary's
// key events with what does not print escaped, so it cannot clear the
// screen, overwrite its line or reverse the text after it.
func TestLaunchFaultMessageIsEscapedInText(t *testing.T) {
	set := faultsManifests(t, "[on-demand]", "  - {code: UnauthorizedOperation, until: 2m, message: \"denied\\e[2J\\r\\u202eevil\"}")
	r := run(t, set, func(o *simulator.Options) { o.Duration = 5 * time.Minute })
	var b strings.Builder
	if err := simulator.WriteText(&b, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `denied\x1b[2J\r\u202eevil`) {
		t.Errorf("the key events do not show the message escaped:\n%s", b.String())
	}
	if strings.ContainsAny(b.String(), "\x1b\r\u202e") {
		t.Errorf("the text summary holds a raw control character:\n%q", b.String())
	}
}
