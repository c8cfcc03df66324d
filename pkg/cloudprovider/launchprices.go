package cloudprovider

import (
	"cmp"
	"slices"
	"sync"
)

// LaunchPrices are the offerings' prices as the shell last gathered them
// for each NodePool, NodeOverlays applied (overlay.InstanceTypes): a
// launch orders its candidates by them, so the cloud buys the offering
// the solver weighed cheapest, not the one cheapest at list price. The
// reference does the same with CreateFleet's prioritized allocation when
// a NodeClaim's prices are overlaid (karpenter-provider-aws
// pkg/providers/instance). It is safe for concurrent use; nil orders
// nothing.
type LaunchPrices struct {
	mu     sync.Mutex
	byPool map[string]map[OfferingKey]float64
}

// NewLaunchPrices returns an empty store.
func NewLaunchPrices() *LaunchPrices {
	return &LaunchPrices{byPool: map[string]map[OfferingKey]float64{}}
}

// Set records the prices of every NodePool's instance types.
func (p *LaunchPrices) Set(its map[string][]*InstanceType) {
	if p == nil {
		return
	}
	byPool := make(map[string]map[OfferingKey]float64, len(its))
	for pool, types := range its {
		prices := map[OfferingKey]float64{}
		for _, it := range types {
			for _, o := range it.Offerings {
				prices[o.Key(it.Name)] = o.Price
			}
		}
		byPool[pool] = prices
	}
	p.mu.Lock()
	p.byPool = byPool
	p.mu.Unlock()
}

// Order sorts cands, stably, by the recorded prices of nodePool's
// offerings (a candidate without one keeps its own price).
func (p *LaunchPrices) Order(nodePool string, cands []LaunchCandidate) {
	if p == nil {
		return
	}
	p.mu.Lock()
	prices := p.byPool[nodePool]
	p.mu.Unlock()
	if len(prices) == 0 {
		return
	}
	price := func(c LaunchCandidate) float64 {
		if v, ok := prices[c.Offering.Key(c.InstanceType.Name)]; ok {
			return v
		}
		return c.Offering.Price
	}
	slices.SortStableFunc(cands, func(a, b LaunchCandidate) int { return cmp.Compare(price(a), price(b)) })
}
