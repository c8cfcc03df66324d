package provisioner

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestNewMetricsRegistersOnce(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	m.nodeClaimsCreated.WithLabelValues("default", "spot").Inc()
	m.pendingPods.Set(3)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, f := range families {
		names[f.GetName()] = true
	}
	for _, want := range []string{"capstan_nodeclaims_created_total", "capstan_provisioner_pending_pods"} {
		if !names[want] {
			t.Errorf("metric %s not gathered (have %v)", want, names)
		}
	}
	if _, err := NewMetrics(reg); err == nil {
		t.Errorf("registering twice on one registry must fail")
	}
}
