package provisioner

import (
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/capstan-dev/capstan/pkg/provisioning"
)

func TestWithoutFailed(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	p := New(nil, nil, nil, clk, nil, Options{})
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
