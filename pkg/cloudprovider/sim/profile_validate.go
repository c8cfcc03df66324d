package sim

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/catalog"
)

// Validate checks a profile against the catalog and returns a
// *ProfileError listing every problem by field path. LoadProfile has
// already validated what it returns, naming the file and document too.
func Validate(p *simv1alpha1.CloudProfile, types []catalog.InstanceType) error {
	if errs := validateProfile(p, types); len(errs) > 0 {
		return &ProfileError{Errs: errs}
	}
	return nil
}

// profileChecker collects errors and what field checks look things up in.
type profileChecker struct {
	spec         *simv1alpha1.CloudProfileSpec
	types, zones map[string]bool
	reservations map[string]simv1alpha1.Reservation
	errs         field.ErrorList
}

func (c *profileChecker) add(errs ...*field.Error) { c.errs = append(c.errs, errs...) }

func validateProfile(p *simv1alpha1.CloudProfile, types []catalog.InstanceType) field.ErrorList {
	s := &p.Spec
	c := &profileChecker{spec: s, types: map[string]bool{}, zones: map[string]bool{}, reservations: map[string]simv1alpha1.Reservation{}}
	for _, t := range types {
		c.types[t.Name] = true
	}
	path := field.NewPath("spec")
	if !slices.Contains(catalog.Regions(), s.Region) {
		c.add(field.NotSupported(path.Child("region"), s.Region, catalog.Regions()))
	}
	styles := []simv1alpha1.CloudStyle{simv1alpha1.CloudStyleAWS, simv1alpha1.CloudStyleGCP, simv1alpha1.CloudStyleAzure}
	if !slices.Contains(styles, s.Style) {
		c.add(field.NotSupported(path.Child("style"), s.Style, styles))
	}
	if s.SpotNotice.Duration < 0 {
		c.add(field.Invalid(path.Child("spotNotice"), s.SpotNotice.Duration.String(), "must not be negative"))
	}
	if s.LaunchLatency.Duration < 0 {
		c.add(field.Invalid(path.Child("launchLatency"), s.LaunchLatency.Duration.String(), "must not be negative"))
	}
	if s.ReservationRefreshInterval.Duration < 0 {
		c.add(field.Invalid(path.Child("reservationRefreshInterval"), s.ReservationRefreshInterval.Duration.String(), "must not be negative"))
	}
	c.count(path.Child("maxSpotInstances"), &s.MaxSpotInstances, 0)
	c.checkZones(path.Child("zones"))
	c.checkZoneIDs(path.Child("zoneIDs"))
	c.checkCapacity(path.Child("capacity"))
	c.checkSpotPrices(path.Child("spotPrices"))
	c.checkReservations(path.Child("reservations"))
	c.checkEvents(path.Child("events"))
	c.checkLaunchFaults(path.Child("launchFaults"))
	c.checkRepairPolicies(path.Child("repairPolicies"))
	return c.errs
}

// checkLaunchFaults: a code EC2 could send (letters, digits and dots), a
// window that is not empty, and match fields that name what exists.
func (c *profileChecker) checkLaunchFaults(path *field.Path) {
	for i, f := range c.spec.LaunchFaults {
		p := path.Index(i)
		switch {
		case f.Code == "":
			c.add(field.Required(p.Child("code"), "the cloud's error code, e.g. UnauthorizedOperation"))
		case !launchFaultCode.MatchString(f.Code):
			c.add(field.Invalid(p.Child("code"), f.Code, "must be an error code like UnauthorizedOperation or InvalidLaunchTemplateName.NotFoundException"))
		}
		if f.CapacityType != "" {
			if valid := []string{v1.CapacityTypeSpot, v1.CapacityTypeOnDemand, v1.CapacityTypeReserved}; !slices.Contains(valid, f.CapacityType) {
				c.add(field.NotSupported(p.Child("capacityType"), f.CapacityType, valid))
			}
		}
		if f.Zone != "" {
			c.zone(p.Child("zone"), f.Zone, false)
		}
		if f.InstanceType != "" {
			c.instanceType(p.Child("instanceType"), f.InstanceType)
		}
		if f.NodeClass != "" {
			for _, msg := range validation.IsDNS1123Subdomain(f.NodeClass) {
				c.add(field.Invalid(p.Child("nodeClass"), f.NodeClass, msg))
			}
		}
		c.window(p.Child("from"), p.Child("until"), f.From, f.Until, "from")
		if f.Count != nil {
			c.count(p.Child("count"), f.Count, 1)
		}
	}
}

// launchFaultCode is the shape of EC2's error codes.
var launchFaultCode = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]*(\.[A-Za-z][A-Za-z0-9]*)*$`)

func (c *profileChecker) checkZones(path *field.Path) {
	if len(c.spec.Zones) == 0 {
		c.add(field.Required(path, "a cloud needs at least one zone"))
	}
	for i, z := range c.spec.Zones {
		p := path.Index(i)
		switch {
		case c.zones[z]:
			c.add(field.Duplicate(p, z))
		case z == "":
			c.add(field.Required(p, ""))
		case c.spec.Style == simv1alpha1.CloudStyleAWS && (!strings.HasPrefix(z, c.spec.Region) || z == c.spec.Region):
			c.add(field.Invalid(p, z, fmt.Sprintf("an aws-style zone is the region and a letter, like %sa", c.spec.Region)))
		}
		// Zones become topology.kubernetes.io/zone label values.
		for _, msg := range validation.IsValidLabelValue(z) {
			c.add(field.Invalid(p, z, msg))
		}
		c.zones[z] = true
	}
}

func (c *profileChecker) checkCapacity(path *field.Path) {
	seen := map[string]bool{}
	for i, pool := range c.spec.Capacity {
		p := path.Index(i)
		c.instanceType(p.Child("instanceType"), pool.InstanceType)
		c.zone(p.Child("zone"), pool.Zone, false)
		c.capacityType(p.Child("capacityType"), pool.CapacityType)
		c.count(p.Child("count"), &pool.Count, 0)
		key := pool.InstanceType + "/" + pool.Zone + "/" + pool.CapacityType
		if seen[key] {
			c.add(field.Duplicate(p, key))
		}
		seen[key] = true
	}
}

// checkSpotPrices rejects overlaps too, so no price depends on list
// order. gcp-style prices may be set; they stay fixed for the run.
func (c *profileChecker) checkSpotPrices(path *field.Path) {
	zonesOf := map[string][]string{}
	for i, sp := range c.spec.SpotPrices {
		p := path.Index(i)
		c.instanceType(p.Child("instanceType"), sp.InstanceType)
		c.zone(p.Child("zone"), sp.Zone, true)
		c.price(p.Child("price"), sp.Price)
		prev := zonesOf[sp.InstanceType]
		switch {
		case slices.Contains(prev, sp.Zone):
			c.add(field.Duplicate(p, sp.InstanceType+"/"+sp.Zone))
		case len(prev) > 0 && (sp.Zone == "*" || slices.Contains(prev, "*")):
			c.add(field.Invalid(p.Child("zone"), sp.Zone, fmt.Sprintf(`overlaps an earlier price for %s: use one "*" price or per-zone prices`, sp.InstanceType)))
		}
		zonesOf[sp.InstanceType] = append(prev, sp.Zone)
	}
}

func (c *profileChecker) checkReservations(path *field.Path) {
	for i, r := range c.spec.Reservations {
		p := path.Index(i)
		switch _, dup := c.reservations[r.ID]; {
		case r.ID == "":
			c.add(field.Required(p.Child("id"), ""))
		case dup:
			c.add(field.Duplicate(p.Child("id"), r.ID))
		case len(r.ID) <= 3 || len(r.ID) > 64 || r.ID[:3] != "cr-" || strings.Trim(r.ID[3:], "0123456789abcdefghijklmnopqrstuvwxyz") != "":
			c.add(field.Invalid(p.Child("id"), r.ID, "must match ^cr-[0-9a-z]+$ (at most 64 characters)"))
		}
		c.reservations[r.ID] = r
		c.instanceType(p.Child("instanceType"), r.InstanceType)
		c.zone(p.Child("zone"), r.Zone, false)
		c.count(p.Child("count"), &r.Count, 1)
		if types := []simv1alpha1.ReservationType{simv1alpha1.ReservationTypeOpen, simv1alpha1.ReservationTypeTargeted}; !slices.Contains(types, r.Type) {
			c.add(field.NotSupported(p.Child("type"), r.Type, types))
		}
		if len(r.OwnerID) != 12 || strings.Trim(r.OwnerID, "0123456789") != "" {
			c.add(field.Invalid(p.Child("ownerID"), r.OwnerID, "must be a 12-digit account id"))
		}
		// Selector terms cannot match empty keys or values.
		for _, k := range slices.Sorted(maps.Keys(r.Tags)) {
			if k == "" || r.Tags[k] == "" {
				c.add(field.Invalid(p.Child("tags").Key(k), r.Tags[k], "tag keys and values must not be empty"))
			}
		}
		// Offsets count from the cloud's start, which no startTime means.
		c.window(p.Child("startTime"), p.Child("endTime"), r.StartTime, r.EndTime, "the start")
		if r.CapacityBlock && r.EndTime == nil {
			c.add(field.Required(p.Child("endTime"), "a capacity block ends: its instances are reclaimed at its end time"))
		}
	}
}

// checkEvents requires time order: the cloud applies events in list order
// and stops at the first that is not yet due.
func (c *profileChecker) checkEvents(path *field.Path) {
	last := time.Duration(0)
	for i, e := range c.spec.Events {
		p := path.Index(i)
		switch at := e.At.Duration; {
		case at < 0:
			c.add(field.Invalid(p.Child("at"), at.String(), "must not be negative"))
		case at < last:
			c.add(field.Invalid(p.Child("at"), at.String(), fmt.Sprintf("is earlier than the event before it (%s): list events in time order", last)))
		default:
			last = at
		}
		c.checkEvent(p, e)
	}
}

// eventFields names the fields each event type reads; setting one it does
// not read is an error rather than silently ignored.
func eventFields() map[simv1alpha1.CloudEventType][]string {
	target := []string{"instanceType", "zone", "instanceID"}
	return map[simv1alpha1.CloudEventType][]string{
		simv1alpha1.EventSpotInterruption:              target,
		simv1alpha1.EventRebalanceRecommendation:       target,
		simv1alpha1.EventScheduledChange:               target,
		simv1alpha1.EventInstanceStopping:              target,
		simv1alpha1.EventInstanceTerminating:           target,
		simv1alpha1.EventCapacityChange:                {"instanceType", "zone", "capacityType", "count"},
		simv1alpha1.EventSpotPriceChange:               {"instanceType", "zone", "price"},
		simv1alpha1.EventReservationExpired:            {"reservationID"},
		simv1alpha1.EventReservationConsumedExternally: {"reservationID", "count"},
		simv1alpha1.EventScale:                         {"workload", "replicas"},
		simv1alpha1.EventKubeletStop:                   append(target, "count"),
		simv1alpha1.EventInstanceStop:                  append(target, "count"),
	}
}

func (c *profileChecker) checkEvent(path *field.Path, e simv1alpha1.CloudEvent) {
	fields := eventFields()
	used, ok := fields[e.Type]
	if !ok {
		c.add(field.NotSupported(path.Child("type"), e.Type, slices.Sorted(maps.Keys(fields))))
		return
	}
	set := map[string]bool{
		"instanceType": e.InstanceType != "", "zone": e.Zone != "", "capacityType": e.CapacityType != "",
		"instanceID": e.InstanceID != "", "count": e.Count != nil, "price": e.Price != "",
		"reservationID": e.ReservationID != "", "workload": e.Workload != "", "replicas": e.Replicas != nil,
	}
	for _, f := range slices.Sorted(maps.Keys(set)) {
		if set[f] && !slices.Contains(used, f) {
			c.add(field.Forbidden(path.Child(f), fmt.Sprintf("not used by %s events", e.Type)))
		}
	}
	switch e.Type {
	case simv1alpha1.EventCapacityChange:
		c.instanceType(path.Child("instanceType"), e.InstanceType)
		c.zone(path.Child("zone"), e.Zone, true)
		c.capacityType(path.Child("capacityType"), e.CapacityType)
		c.count(path.Child("count"), e.Count, 0)
	case simv1alpha1.EventSpotPriceChange:
		if c.spec.Style == simv1alpha1.CloudStyleGCP {
			c.add(field.Invalid(path.Child("type"), e.Type, "gcp-style spot prices are fixed for the run"))
		}
		c.instanceType(path.Child("instanceType"), e.InstanceType)
		c.zone(path.Child("zone"), e.Zone, true)
		c.price(path.Child("price"), e.Price)
	case simv1alpha1.EventReservationExpired, simv1alpha1.EventReservationConsumedExternally:
		r, ok := c.reservations[e.ReservationID]
		if e.ReservationID == "" {
			c.add(field.Required(path.Child("reservationID"), ""))
		} else if !ok {
			c.add(field.NotFound(path.Child("reservationID"), e.ReservationID))
		}
		if e.Type == simv1alpha1.EventReservationConsumedExternally {
			c.count(path.Child("count"), e.Count, 1)
			if ok && e.Count != nil && *e.Count > r.Count {
				c.add(field.Invalid(path.Child("count"), *e.Count, fmt.Sprintf("exceeds the reservation's %d instances", r.Count)))
			}
		}
	case simv1alpha1.EventScale:
		ns, name, found := strings.Cut(e.Workload, "/")
		if !found || len(validation.IsDNS1123Label(ns)) > 0 || len(validation.IsDNS1123Subdomain(name)) > 0 {
			c.add(field.Invalid(path.Child("workload"), e.Workload, "must name a Deployment as namespace/name"))
		}
		if e.Replicas == nil {
			c.add(field.Required(path.Child("replicas"), ""))
		} else if *e.Replicas < 0 {
			c.add(field.Invalid(path.Child("replicas"), *e.Replicas, "must not be negative"))
		}
	default: // An interruption picks one instance by id, or every one of a type in a zone ("*": all).
		if e.Count != nil {
			c.count(path.Child("count"), e.Count, 1)
		}
		if e.Type == simv1alpha1.EventRebalanceRecommendation && c.spec.Style != simv1alpha1.CloudStyleAWS {
			c.add(field.Invalid(path.Child("type"), e.Type, "only the aws style sends rebalance recommendations"))
		}
		if e.InstanceID == "" {
			c.instanceType(path.Child("instanceType"), e.InstanceType)
			c.zone(path.Child("zone"), e.Zone, true)
			return
		}
		if e.InstanceType != "" || e.Zone != "" {
			c.add(field.Forbidden(path.Child("instanceID"), "pick instances by instanceID or by instanceType and zone, not both"))
		}
		if id, ok := strings.CutPrefix(e.InstanceID, "i-"); !ok || id == "" || strings.Trim(id, "0123456789abcdef") != "" {
			c.add(field.Invalid(path.Child("instanceID"), e.InstanceID, "must be an instance id like i-00000000002a"))
		}
	}
}

func (c *profileChecker) instanceType(path *field.Path, name string) {
	switch {
	case name == "":
		c.add(field.Required(path, ""))
	case !c.types[name]:
		c.add(field.Invalid(path, name, "not in the catalog"))
	}
}

// zone checks a zone reference; allowAll permits "*", every zone.
func (c *profileChecker) zone(path *field.Path, zone string, allowAll bool) {
	switch {
	case zone == "":
		c.add(field.Required(path, ""))
	case allowAll && zone == "*", c.zones[zone]:
	case allowAll:
		c.add(field.NotSupported(path, zone, append(slices.Clone(c.spec.Zones), "*")))
	default:
		c.add(field.NotSupported(path, zone, c.spec.Zones))
	}
}

// capacityType is a pool's: reserved capacity comes from reservations.
func (c *profileChecker) capacityType(path *field.Path, ct string) {
	if valid := []string{v1.CapacityTypeSpot, v1.CapacityTypeOnDemand}; !slices.Contains(valid, ct) {
		c.add(field.NotSupported(path, ct, valid))
	}
}

// window checks a span of offsets from the cloud's start: start (unset,
// the start itself) not negative, end (unset, open) after start, which
// the message names as startName.
func (c *profileChecker) window(startPath, endPath *field.Path, start, end *metav1.Duration, startName string) {
	from := time.Duration(0)
	if start != nil {
		if from = start.Duration; from < 0 {
			c.add(field.Invalid(startPath, from.String(), "must not be negative"))
		}
	}
	if end != nil && end.Duration <= from {
		c.add(field.Invalid(endPath, end.Duration.String(), fmt.Sprintf("must be later than %s (%s)", startName, from)))
	}
}

func (c *profileChecker) count(path *field.Path, count *int, least int) {
	switch {
	case count == nil:
		c.add(field.Required(path, ""))
	case *count < least:
		c.add(field.Invalid(path, *count, fmt.Sprintf("must be at least %d", least)))
	}
}

// maxPriceLength bounds a price string; no hourly price needs more.
const maxPriceLength = 32

// price takes what SimNodeClass spotMaxPrice takes: dollars per hour as a
// decimal string, which a YAML float would not keep exact.
func (c *profileChecker) price(path *field.Path, price string) {
	whole, frac, dot := strings.Cut(price, ".")
	digits := func(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }
	switch f, err := strconv.ParseFloat(price, 64); {
	case price == "":
		c.add(field.Required(path, ""))
	case !digits(whole) || dot && !digits(frac) || err != nil || len(price) > maxPriceLength:
		c.add(field.Invalid(path, price, `must be a decimal number of dollars per hour, like "0.0634"`))
	case f <= 0:
		c.add(field.Invalid(path, price, "must be positive"))
	}
}

// checkRepairPolicies: a condition type, a status a condition can have
// and a toleration that is not negative.
func (c *profileChecker) checkRepairPolicies(path *field.Path) {
	statuses := []string{string(corev1.ConditionTrue), string(corev1.ConditionFalse), string(corev1.ConditionUnknown)}
	for i, rp := range c.spec.RepairPolicies {
		p := path.Index(i)
		if rp.ConditionType == "" {
			c.add(field.Required(p.Child("conditionType"), ""))
		}
		if !slices.Contains(statuses, rp.ConditionStatus) {
			c.add(field.NotSupported(p.Child("conditionStatus"), rp.ConditionStatus, statuses))
		}
		if d := rp.TolerationDuration.Duration; d < 0 {
			c.add(field.Invalid(p.Child("tolerationDuration"), d.String(), "must not be negative"))
		}
	}
}
