package provisioner

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	clocktesting "k8s.io/utils/clock/testing"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/effects"
	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/scaleup"
	"github.com/capstan-dev/capstan/pkg/test"
)

func TestWithoutFailed(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	p := New(Deps{Clock: clk}, Options{})
	p.LaunchFailed("failed")
	nodes := []*provisioning.Node{{Name: "failed", InFlight: true}, {Name: "other", InFlight: true}, {Name: "failed"}}
	if got := p.withoutFailed(nodes); len(got) != 2 || got[0].Name != "other" {
		t.Errorf("kept %v", got)
	}
	clk.Step(2 * time.Minute)
	if got := p.withoutFailed(nodes); len(got) != 3 {
		t.Errorf("remembered too long: kept %d", len(got))
	}
}

// A NodeClaim just created counts as in-flight capacity even while the
// cache does not show it, so an immediate re-plan does not plan its pods
// again; a failed launch drops it.
func TestWithCreated(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	p := New(Deps{Clock: clk}, Options{})
	for _, name := range []string{"fresh", "cached", "failed"} {
		nc := test.NodeClaim(func(nc *v1.NodeClaim) { nc.Name = name })
		nc.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}
		p.created[name] = nc
	}
	p.LaunchFailed("failed")
	got := p.withCreated([]*provisioning.Node{{Name: "cached", InFlight: true}, {Name: "node-1"}})
	var names []string
	for _, n := range got {
		names = append(names, n.Name)
	}
	if diff := cmp.Diff([]string{"cached", "node-1", "fresh"}, names); diff != "" {
		t.Errorf("nodes (-want +got):\n%s", diff)
	}
	if fresh := got[2]; !fresh.InFlight || fresh.Allocatable.Cpu().String() != "2" {
		t.Errorf("the created claim as %+v, want in-flight with what it was sized for", fresh)
	}
}

// Without Metrics a solve's numbers and the NodeClaims it creates are
// recorded where nobody reads them, not refused.
func TestNoMetrics(t *testing.T) {
	p := New(Deps{Clock: clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))}, Options{})
	p.metrics.pendingPods.Set(1)
	p.metrics.unplacedPods.WithLabelValues("NoInstanceTypeFits").Inc()
	p.metrics.schedulingDuration.Observe(1)
	if _, err := p.applier.Apply(context.Background(), []effects.Effect{effects.Metric{Name: scaleup.MetricNodeClaimsCreated, Labels: []string{"default", v1.CapacityTypeSpot}, Value: 1}}); err != nil {
		t.Errorf("counting a created NodeClaim: %v", err)
	}
}
