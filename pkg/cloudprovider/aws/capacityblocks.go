package aws

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/capstan-dev/capstan/pkg/cloudprovider"
)

// CapacityBlockReclaimLead is how long before a capacity block's end EC2
// starts terminating its instances: it warns forty minutes before the
// end that they begin to terminate in ten ("Monitor Capacity Blocks
// using EventBridge").
const CapacityBlockReclaimLead = 30 * time.Minute

// CapacityBlocks implements cloudprovider.CapacityBlockSource: the
// account's active capacity blocks as last described (Refresh), each
// reclaimed from CapacityBlockReclaimLead before its end.
func (p *Provider) CapacityBlocks(ctx context.Context) ([]cloudprovider.CapacityBlock, error) {
	c, err := p.loadedCatalog(ctx)
	if err != nil {
		return nil, err
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	var out []cloudprovider.CapacityBlock
	for _, id := range slices.Sorted(maps.Keys(c.reserved)) {
		if end := c.reserved[id].blockEnd; !end.IsZero() {
			out = append(out, cloudprovider.CapacityBlock{ID: id, Reclaim: end.Add(-CapacityBlockReclaimLead)})
		}
	}
	return out, nil
}
