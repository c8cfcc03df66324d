package disruption

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
)

func TestCapacityBlockDrains(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	claim := func(name, ct, id string, deleted bool) *v1.NodeClaim {
		nc := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.CapacityTypeLabelKey: ct}}}
		if id != "" {
			nc.Labels[v1.LabelCapacityReservationID] = id
		}
		if deleted {
			nc.DeletionTimestamp = &metav1.Time{Time: now}
		}
		return nc
	}
	type drained struct {
		Name     string
		Deadline time.Time
	}
	cases := []struct {
		name   string
		claims []*v1.NodeClaim
		blocks []cloudprovider.CapacityBlock
		want   []drained
		wake   time.Time
	}{
		{name: "no blocks", claims: []*v1.NodeClaim{claim("a", v1.CapacityTypeReserved, "cr-1", false)}},
		{name: "a block far off: wait for its drain",
			claims: []*v1.NodeClaim{claim("a", v1.CapacityTypeReserved, "cr-1", false)},
			blocks: []cloudprovider.CapacityBlock{{ID: "cr-1", Reclaim: now.Add(time.Hour)}},
			wake:   now.Add(time.Hour - CapacityBlockDrainLead)},
		{name: "exactly the lead away: drain, with the reclaim as deadline",
			claims: []*v1.NodeClaim{claim("a", v1.CapacityTypeReserved, "cr-1", false)},
			blocks: []cloudprovider.CapacityBlock{{ID: "cr-1", Reclaim: now.Add(CapacityBlockDrainLead)}},
			want:   []drained{{"a", now.Add(CapacityBlockDrainLead)}}},
		{name: "past the reclaim: drain at once",
			claims: []*v1.NodeClaim{claim("a", v1.CapacityTypeReserved, "cr-1", false)},
			blocks: []cloudprovider.CapacityBlock{{ID: "cr-1", Reclaim: now.Add(-time.Minute)}},
			want:   []drained{{"a", now.Add(-time.Minute)}}},
		{name: "only the block's nodes, not deleted ones, not ones relabelled on-demand",
			claims: []*v1.NodeClaim{
				claim("in", v1.CapacityTypeReserved, "cr-1", false), claim("other", v1.CapacityTypeReserved, "cr-2", false),
				claim("gone", v1.CapacityTypeReserved, "cr-1", true), claim("released", v1.CapacityTypeOnDemand, "cr-1", false),
				claim("spot", v1.CapacityTypeSpot, "", false),
			},
			blocks: []cloudprovider.CapacityBlock{{ID: "cr-1", Reclaim: now.Add(time.Minute)}, {ID: "cr-2", Reclaim: now.Add(2 * time.Hour)}},
			want:   []drained{{"in", now.Add(time.Minute)}},
			wake:   now.Add(2*time.Hour - CapacityBlockDrainLead)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, wake := CapacityBlockDrains(tc.claims, tc.blocks, now)
			var names []drained
			for _, d := range got {
				names = append(names, drained{d.NodeClaim.Name, d.Deadline})
			}
			if diff := cmp.Diff(tc.want, names); diff != "" {
				t.Errorf("drains (-want +got):\n%s", diff)
			}
			if !wake.Equal(tc.wake) {
				t.Errorf("wake %s, want %s", wake, tc.wake)
			}
		})
	}
}
