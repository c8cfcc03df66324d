package clustermetrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/api/v1alpha1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/overlay"
)

// Phases of a NodeClaim, as the metrics show them.
const (
	PhaseLaunching    = "Launching"
	PhaseRegistering  = "Registering"
	PhaseInitializing = "Initializing"
	PhaseReady        = "Ready"
	PhaseDeleting     = "Deleting"
)

// Phase is where a NodeClaim is in its life.
func Phase(nc *v1.NodeClaim) string {
	switch conds := nc.Status.Conditions; {
	case nc.DeletionTimestamp != nil:
		return PhaseDeleting
	case !meta.IsStatusConditionTrue(conds, v1.ConditionTypeLaunched):
		return PhaseLaunching
	case !meta.IsStatusConditionTrue(conds, v1.ConditionTypeRegistered):
		return PhaseRegistering
	case !meta.IsStatusConditionTrue(conds, v1.ConditionTypeInitialized):
		return PhaseInitializing
	}
	return PhaseReady
}

// Collector computes the gauges on every scrape.
type Collector struct {
	client     client.Reader
	cloud      cloudprovider.CloudProvider
	nodeClaims *prometheus.Desc
	nodes      *prometheus.Desc
	cost       *prometheus.Desc
	costByType *prometheus.Desc
}

// Deps are what the collector reads on every scrape.
type Deps struct {
	// Reader lists NodeClaims, Nodes and NodePools.
	Reader client.Reader
	// Cloud prices what launched.
	Cloud cloudprovider.CloudProvider
}

// New builds a collector; it has no options. Register it on a
// prometheus.Registerer (the metrics registry, not the manager: it
// computes on scrape and runs nothing).
func New(deps Deps) *Collector {
	return &Collector{
		client: deps.Reader, cloud: deps.Cloud,
		nodeClaims: prometheus.NewDesc("capstan_nodeclaims", "NodeClaims by NodePool and phase.", []string{"nodepool", "phase"}, nil),
		nodes:      prometheus.NewDesc("capstan_nodes", "Nodes Capstan manages, by NodePool and capacity type.", []string{"nodepool", "capacity_type"}, nil),
		cost:       prometheus.NewDesc("capstan_nodepool_cost_per_hour", "What a NodePool's launched NodeClaims cost per hour.", []string{"nodepool"}, nil),
		costByType: prometheus.NewDesc("capstan_capacity_cost_per_hour", "What launched NodeClaims cost per hour, by NodePool and capacity type.", []string{"nodepool", "capacity_type"}, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.nodeClaims
	ch <- c.nodes
	ch <- c.cost
	ch <- c.costByType
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ncs, nodes, nps, overlays := &v1.NodeClaimList{}, &corev1.NodeList{}, &v1.NodePoolList{}, &v1alpha1.NodeOverlayList{}
	if c.client.List(ctx, ncs) != nil || c.client.List(ctx, nodes) != nil || c.client.List(ctx, nps) != nil || c.client.List(ctx, overlays) != nil {
		return
	}
	type key struct{ a, b string }
	phases, byType, cost, costByType := map[key]int{}, map[key]int{}, map[string]float64{}, map[key]float64{}
	// The prices every decision sees: the cloud's with the NodeOverlays
	// applied (docs/overlay.md).
	res, _, err := overlay.InstanceTypes(ctx, c.cloud, nps.Items, overlays.Items)
	if err != nil {
		return
	}
	types := res.InstanceTypes
	for i := range ncs.Items {
		nc := &ncs.Items[i]
		pool := nc.Labels[v1.NodePoolLabelKey]
		phases[key{pool, Phase(nc)}]++
		if p, ok := cloudprovider.LaunchedPrice(nc, types[pool]); ok && nc.DeletionTimestamp == nil {
			cost[pool] += p
			costByType[key{pool, nc.Labels[v1.CapacityTypeLabelKey]}] += p
		}
	}
	for _, n := range nodes.Items {
		if pool, ok := n.Labels[v1.NodePoolLabelKey]; ok {
			byType[key{pool, n.Labels[v1.CapacityTypeLabelKey]}]++
		}
	}
	for k, n := range phases {
		ch <- prometheus.MustNewConstMetric(c.nodeClaims, prometheus.GaugeValue, float64(n), k.a, k.b)
	}
	for k, n := range byType {
		ch <- prometheus.MustNewConstMetric(c.nodes, prometheus.GaugeValue, float64(n), k.a, k.b)
	}
	for pool, p := range cost {
		ch <- prometheus.MustNewConstMetric(c.cost, prometheus.GaugeValue, p, pool)
	}
	for k, p := range costByType {
		ch <- prometheus.MustNewConstMetric(c.costByType, prometheus.GaugeValue, p, k.a, k.b)
	}
}
