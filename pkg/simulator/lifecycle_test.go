package simulator

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/catalog"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
	"github.com/capstan-dev/capstan/pkg/manifests"
)

// lifecycleSim is a simulation of one NodePool of m5.large, its nodes
// expiring after expireAfter, and a one-CPU pod, on a cloud whose
// instances register after latency.
func lifecycleSim(tb testing.TB, latency, expireAfter string, opts Options) *Simulator {
	tb.Helper()
	doc := `apiVersion: sim.capstan.dev/v1alpha1
kind: CloudProfile
metadata: {name: lifecycle}
spec:
  zones: [us-west-2a]
  launchLatency: ` + latency + `
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      expireAfter: ` + expireAfter + `
      requirements:
      - {key: node.kubernetes.io/instance-type, operator: In, values: [m5.large]}
      nodeClassRef: {group: sim.capstan.dev, kind: SimNodeClass, name: default}
---
apiVersion: sim.capstan.dev/v1alpha1
kind: SimNodeClass
metadata: {name: default}
---
apiVersion: v1
kind: Pod
metadata: {name: a, namespace: default}
spec:
  containers: [{name: pause, image: registry.k8s.io/pause:3.10, resources: {requests: {cpu: "1"}}}]
`
	set, err := manifests.Load([]string{"-"}, strings.NewReader(doc))
	if err != nil {
		tb.Fatal(err)
	}
	profile, err := Profile("", set)
	if err != nil {
		tb.Fatal(err)
	}
	types, err := catalog.Load()
	if err != nil {
		tb.Fatal(err)
	}
	s, err := New(set, profile, types, opts)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// A NodeClaim whose node registered and initialized is Ready, in simulate
// as in the controller.
func TestNodeClaimsBecomeReady(t *testing.T) {
	opts := DefaultOptions()
	opts.Duration = 10 * time.Minute
	s := lifecycleSim(t, "30s", "720h", opts)
	if _, err := s.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(s.world.claims) == 0 {
		t.Fatal("no NodeClaim launched")
	}
	for _, nc := range s.world.claims {
		if c := meta.FindStatusCondition(nc.Status.Conditions, v1.ConditionTypeReady); c == nil || c.Status != "True" {
			t.Errorf("nodeclaim %s Ready = %+v, want True", nc.Name, c)
		}
	}
}

// A NodeClaim whose node does not register in time is deleted and goes
// through termination like any other (its instance terminated there, an
// error not dropped), not removed behind the API's back.
func TestRegistrationTimeoutDeletesTheNodeClaim(t *testing.T) {
	ctx := context.Background()
	opts := DefaultOptions()
	opts.RegistrationTTL = time.Minute
	s := lifecycleSim(t, "10m", "720h", opts)
	// The pod is found unschedulable, then the batch window closes and
	// its NodeClaim launches.
	for range 2 {
		if _, err := s.round(ctx); err != nil {
			t.Fatal(err)
		}
		s.clock.Step(opts.Window.Max)
	}
	if len(s.world.claims) != 1 {
		t.Fatalf("%d nodeclaims, want 1", len(s.world.claims))
	}
	var nc *v1.NodeClaim
	for _, c := range s.world.claims {
		nc = c
	}
	running := func() int {
		n := 0
		for _, inst := range s.cloud.Snapshot().Instances {
			if inst.State == sim.InstanceRunning {
				n++
			}
		}
		return n
	}
	if running() != 1 {
		t.Fatalf("%d instances running, want the NodeClaim's", running())
	}
	s.clock.Step(opts.RegistrationTTL)
	if _, err := s.register(ctx); err != nil {
		t.Fatal(err)
	}
	if s.world.claims[nc.Name] == nil || s.world.claims[nc.Name].DeletionTimestamp == nil {
		t.Fatalf("nodeclaim %s not marked deleted at the registration timeout", nc.Name)
	}
	if running() != 1 {
		t.Errorf("the instance was terminated before termination ran")
	}
	if _, err := s.terminate(ctx); err != nil {
		t.Fatal(err)
	}
	if s.world.claims[nc.Name] != nil || running() != 0 {
		t.Errorf("after termination: nodeclaim kept %t, %d instances running", s.world.claims[nc.Name] != nil, running())
	}
	found := false
	for _, e := range s.rec.events {
		found = found || e.Kind == "RegistrationTimeout" && e.Object == "nodeclaim/"+nc.Name
	}
	if !found {
		t.Errorf("no RegistrationTimeout event in %+v", s.rec.events)
	}
	if rec := s.rec.nodes[nc.Name]; rec == nil || rec.DeletionReason != "RegistrationTimeout" {
		t.Errorf("deletionReason = %+v, want RegistrationTimeout (docs/simulate.md)", rec)
	}
}

// A NodeClaim whose instance garbage collection finds gone is reported
// deleted for InstanceTerminated (docs/simulate.md).
func TestGarbageCollectedNodeClaimIsInstanceTerminated(t *testing.T) {
	ctx := context.Background()
	opts := DefaultOptions()
	s := lifecycleSim(t, "10s", "720h", opts)
	for range 4 {
		if _, err := s.round(ctx); err != nil {
			t.Fatal(err)
		}
		s.clock.Step(opts.Window.Max)
	}
	if len(s.world.claims) != 1 {
		t.Fatalf("%d nodeclaims, want 1", len(s.world.claims))
	}
	var name string
	for n := range s.world.claims {
		name = n
	}
	var ids []string
	for id, inst := range s.cloud.Snapshot().Instances {
		if inst.State == sim.InstanceRunning {
			ids = append(ids, id)
		}
	}
	if len(ids) != 1 {
		t.Fatalf("%d instances running, want 1", len(ids))
	}
	// The instance goes behind Capstan's back.
	if _, err := s.cloud.TerminateInstances(ctx, ids); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := s.collect(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := s.terminate(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if rec := s.rec.nodes[name]; rec == nil || rec.DeletionReason != "InstanceTerminated" {
		t.Errorf("deletionReason = %+v, want InstanceTerminated", rec)
	}
}

// A NodeClaim deleted at the registration timeout has its pod planned
// again at once, onto a new NodeClaim, and its instance's Node never
// registers afterwards (a terminated instance boots no kubelet); a pod
// still pending at the end says why, whatever kept it.
func TestRegistrationTimeoutReplans(t *testing.T) {
	for _, tc := range []struct {
		name, latency string
		ttl, duration time.Duration
		// launches are the launch times; pending the pod's reason at the
		// end, "" when it runs.
		launches       []string
		pending        string
		schedulerNames []string
	}{
		{name: "registers in time", latency: "30s", ttl: 15 * time.Minute, duration: time.Hour, launches: []string{"1s"}},
		{name: "never registers in time", latency: "20m", ttl: 15 * time.Minute, duration: time.Hour,
			launches: []string{"1s", "15m1s", "30m1s", "45m1s"}, pending: "Nominated: pod should schedule on "},
		{name: "a shorter timeout", latency: "10m", ttl: 6 * time.Minute, duration: 30 * time.Minute,
			launches: []string{"1s", "6m1s", "12m1s", "18m1s", "24m1s"}, pending: "Nominated: pod should schedule on "},
		// Pods no decision named have a reason too.
		{name: "the run ends before the batch window closes", latency: "30s", ttl: 15 * time.Minute, duration: 500 * time.Millisecond,
			pending: "Unschedulable: no node fits it; the provisioner's batch window was still open when the run ended"},
		{name: "a scheduler Capstan does not serve", latency: "30s", ttl: 15 * time.Minute, duration: time.Hour, schedulerNames: []string{"other"},
			pending: `SchedulerNotServed: its scheduler "default-scheduler" is not one Capstan serves (other); see --scheduler-names`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := DefaultOptions()
			opts.Duration, opts.RegistrationTTL = tc.duration, tc.ttl
			if tc.schedulerNames != nil {
				opts.SchedulerNames = tc.schedulerNames
			}
			r, err := lifecycleSim(t, tc.latency, "720h", opts).Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var launches []string
			for _, n := range r.Nodes {
				launches = append(launches, n.LaunchedAt)
				if n.DeletedAt != "" && n.Name != n.NodeClaim {
					t.Errorf("node %s of nodeclaim %s registered, but its instance was terminated at %s", n.Name, n.NodeClaim, n.DeletedAt)
				}
			}
			if diff := cmp.Diff(tc.launches, launches); diff != "" {
				t.Errorf("launches (-want +got):\n%s", diff)
			}
			for _, e := range r.Events {
				if e.Kind == "InstanceStopped" {
					t.Errorf("a node registered for a terminated instance: %+v", e)
				}
			}
			if len(r.Pods) != 1 {
				t.Fatalf("pods %+v, want one", r.Pods)
			}
			if p := r.Pods[0]; (p.Node == "") != (tc.pending != "") || !strings.HasPrefix(p.PendingReason, tc.pending) {
				t.Errorf("pod %+v; want pending %q", p, tc.pending)
			}
		})
	}
}
