package cloudprovider

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// Candidates come cheapest first at the prices recorded for the
// NodePool; another NodePool's, or none, leave the order alone.
func TestLaunchPricesOrder(t *testing.T) {
	cheap := &InstanceType{Name: "m7g.large", Offerings: Offerings{{Zone: "a", CapacityType: v1.CapacityTypeOnDemand, Price: 0.08}}}
	dear := &InstanceType{Name: "m6i.large", Offerings: Offerings{{Zone: "a", CapacityType: v1.CapacityTypeOnDemand, Price: 0.096}}}
	overlaid := &InstanceType{Name: "m6i.large", Offerings: Offerings{{Zone: "a", CapacityType: v1.CapacityTypeOnDemand, Price: 0.05}}}
	names := func(cs []LaunchCandidate) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.InstanceType.Name)
		}
		return out
	}
	p := NewLaunchPrices()
	p.Set(map[string][]*InstanceType{"general": {cheap, overlaid}})
	for _, tc := range []struct {
		pool string
		p    *LaunchPrices
		want []string
	}{
		{"general", p, []string{"m6i.large", "m7g.large"}},
		{"other", p, []string{"m7g.large", "m6i.large"}},
		{"general", nil, []string{"m7g.large", "m6i.large"}},
	} {
		cands := []LaunchCandidate{{InstanceType: cheap, Offering: cheap.Offerings[0]}, {InstanceType: dear, Offering: dear.Offerings[0]}}
		tc.p.Order(tc.pool, cands)
		if diff := cmp.Diff(tc.want, names(cands)); diff != "" {
			t.Errorf("%s: order (-want +got):\n%s", tc.pool, diff)
		}
	}
}
