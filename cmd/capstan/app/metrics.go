package app

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	cpmetrics "github.com/capstan-dev/capstan/pkg/cloudprovider/metrics"
	"github.com/capstan-dev/capstan/pkg/controllers/clustermetrics"
	"github.com/capstan-dev/capstan/pkg/controllers/disrupter"
	"github.com/capstan-dev/capstan/pkg/controllers/provisioner"
	"github.com/capstan-dev/capstan/pkg/controllers/termination"
)

// controllerMetrics are Capstan's own metrics, registered in one place so
// the chart's dashboard and alerts are checked against exactly what the
// controller serves (charts_test.go).
type controllerMetrics struct {
	// cloud is the cloud provider instrumented with its call metrics.
	cloud       cloudprovider.CloudProvider
	provisioner *provisioner.Metrics
	disruption  *disrupter.Metrics
	// slack observes interrupted nodes' deadline slack.
	slack prometheus.Observer
}

// registerMetrics registers every Capstan metric on reg; c feeds the
// cluster gauges (NodeClaims, nodes, cost) at scrape time.
func registerMetrics(reg prometheus.Registerer, c client.Reader, cloud cloudprovider.CloudProvider) (controllerMetrics, error) {
	m := controllerMetrics{cloud: cpmetrics.Decorate(cloud, reg)}
	var err error
	if m.provisioner, err = provisioner.NewMetrics(reg); err != nil {
		return m, fmt.Errorf("registering metrics, %w", err)
	}
	if err := reg.Register(clustermetrics.New(clustermetrics.Deps{Reader: c, Cloud: m.cloud})); err != nil {
		return m, fmt.Errorf("registering cluster metrics, %w", err)
	}
	if m.disruption, err = disrupter.NewMetrics(reg); err != nil {
		return m, fmt.Errorf("registering disruption metrics, %w", err)
	}
	if m.slack, err = termination.NewSlackMetric(reg); err != nil {
		return m, fmt.Errorf("registering termination metrics, %w", err)
	}
	return m, nil
}
