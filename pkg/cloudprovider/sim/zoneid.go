package sim

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/catalog"
)

// ZoneID is the topology.k8s.aws/zone-id of a profile's zone: its entry
// in spec.zoneIDs, else DefaultZoneID. Every style's nodes carry it: the
// label is well known, so a pod may select it on any cloud, and a node
// without it would leave such a pod Pending beside the node launched for
// it.
func ZoneID(s *simv1alpha1.CloudProfileSpec, zone string) string {
	if id := s.ZoneIDs[zone]; id != "" {
		return id
	}
	return DefaultZoneID(s.Region, zone, slices.Index(s.Zones, zone))
}

// DefaultZoneID names a zone AWS style, the region's code and a number:
// the zone's final letter's place in the alphabet (us-east-1a is
// use1-az1), else its final number (azure-style westus2-2 is az2), else
// index+1, its place in the zone list. The same profile always gets the
// same IDs.
func DefaultZoneID(region, zone string, index int) string {
	n := index + 1
	digits := strings.TrimRight(zone, "0123456789")
	switch {
	case digits != zone:
		if v, err := strconv.Atoi(zone[len(digits):]); err == nil {
			n = v
		}
	case zone != "" && zone[len(zone)-1] >= 'a' && zone[len(zone)-1] <= 'z':
		n = int(zone[len(zone)-1]-'a') + 1
	}
	return fmt.Sprintf("%s-az%d", catalog.RegionCode(region), n)
}

// checkZoneIDs: explicit IDs name listed zones and are label values, and
// no two zones share an ID, explicit or derived, since the ID is how a
// pod tells zones apart.
func (c *profileChecker) checkZoneIDs(path *field.Path) {
	s := c.spec
	for _, z := range slices.Sorted(maps.Keys(s.ZoneIDs)) {
		p := path.Key(z)
		if !c.zones[z] {
			c.add(field.NotSupported(p, z, s.Zones))
		}
		id := s.ZoneIDs[z]
		if id == "" {
			c.add(field.Required(p, "omit the zone for its default ID"))
		}
		for _, msg := range validation.IsValidLabelValue(id) {
			c.add(field.Invalid(p, id, msg))
		}
	}
	owner := map[string]string{}
	for i, z := range s.Zones {
		id := ZoneID(s, z)
		// A zone listed twice is checkZones' error, not a shared ID.
		if other, dup := owner[id]; dup && other != z {
			p := field.NewPath("spec", "zones").Index(i)
			msg := fmt.Sprintf("its default zone ID %s is zone %s's too: give one of them an ID in spec.zoneIDs", id, other)
			if s.ZoneIDs[z] != "" {
				p, msg = path.Key(z), fmt.Sprintf("zone %s has this ID too", other)
			}
			c.add(field.Invalid(p, id, msg))
		}
		owner[id] = z
	}
}
