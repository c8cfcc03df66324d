package aws

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// onDemandPrices are the region's on-demand prices: the embedded table's
// (pricetable.go), overlaid with the Price List API's latest answer.
// The API is not asked in an isolated VPC (Options.IsolatedVPC) or in
// GovCloud, which it does not serve; when it fails, its last answer
// stands, as the reference keeps previously retrieved prices.
func (p *Provider) onDemandPrices(ctx context.Context) map[string]float64 {
	prices := map[string]float64{}
	table, err := staticPrices(p.opts.Region)
	if err != nil {
		log.FromContext(ctx).Error(err, "reading the embedded price table")
	}
	maps.Copy(prices, table)
	if p.opts.Pricing != nil && !p.opts.IsolatedVPC && priceListReachable(p.opts.Region) {
		listed, err := onDemandPrices(ctx, p.opts.Pricing, p.opts.Region)
		p.mu.Lock()
		if err != nil {
			log.FromContext(ctx).Error(err, "reading on-demand prices from the price list api, keeping the last known", "region", p.opts.Region)
		} else {
			p.listed = listed
		}
		listed = p.listed
		p.mu.Unlock()
		maps.Copy(prices, listed)
	}
	return prices
}

// Unpriced are the instance types of c without an on-demand price, and
// why: they stay, with their on-demand offerings unavailable (as the
// reference's offerings without a price are), spot still offered where
// it has a price.
func (p *Provider) unpriced(c *region) ([]string, string) {
	var names []string
	for name, m := range c.types {
		if !m.priced {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	why := fmt.Sprintf("neither the price list api nor the embedded table (for %s) prices them", p.opts.Region)
	switch {
	case p.opts.IsolatedVPC:
		why = "in an isolated VPC only the embedded table is read, and it does not price them"
	case !priceListReachable(p.opts.Region):
		why = "the price list api does not serve GovCloud, and the embedded table does not price them"
	case p.opts.Pricing == nil:
		why = "no price list api client, and the embedded table does not price them"
	}
	return names, why
}

// reportUnpriced logs the types without an on-demand price when they
// change, and sets the metric to them.
func (p *Provider) reportUnpriced(ctx context.Context, c *region) {
	names, why := p.unpriced(c)
	p.opts.PriceMetrics.set(names)
	key := strings.Join(names, ",")
	p.mu.Lock()
	changed := key != p.unpricedSeen
	p.unpricedSeen = key
	p.mu.Unlock()
	if changed && len(names) > 0 {
		log.FromContext(ctx).Info("instance types without an on-demand price are not launched on-demand", "instanceTypes", names, "count", len(names), "reason", why)
	}
}

// PriceMetrics are the provider's price gauges.
type PriceMetrics struct {
	unpriced *prometheus.GaugeVec
}

// NewPriceMetrics registers capstan_cloudprovider_aws_unpriced_instance_types
// with reg: 1 for each instance type the region sells that has no
// on-demand price (docs/aws.md, "Prices").
func NewPriceMetrics(reg prometheus.Registerer) (*PriceMetrics, error) {
	m := &PriceMetrics{unpriced: prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "capstan_cloudprovider_aws_unpriced_instance_types",
		Help: "Instance types the region sells without an on-demand price (1 each): their on-demand offerings are unavailable.",
	}, []string{"instance_type"})}
	if err := reg.Register(m.unpriced); err != nil {
		return nil, fmt.Errorf("registering aws price metrics, %w", err)
	}
	return m, nil
}

// set makes the gauge name exactly these types; nil metrics do nothing.
func (m *PriceMetrics) set(names []string) {
	if m == nil {
		return
	}
	m.unpriced.Reset()
	for _, n := range names {
		m.unpriced.WithLabelValues(n).Set(1)
	}
}
