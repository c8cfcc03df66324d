package invariants

import (
	"maps"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/watch"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// ObserveClaim takes one NodeClaim change at now: it records the
// NodeClaim's history and checks the budgets and reservations.
func (c *Checker) ObserveClaim(typ watch.EventType, nc *v1.NodeClaim, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old, known := c.claims[nc.Name]
	record := func(kind ClaimEventKind) {
		c.history = append(c.history, ClaimEvent{Name: nc.Name, Kind: kind, At: now})
	}
	if !known {
		record(Created)
	}
	was := func(cond string) bool {
		return known && meta.IsStatusConditionTrue(old.Status.Conditions, cond)
	}
	if meta.IsStatusConditionTrue(nc.Status.Conditions, v1.ConditionTypeInitialized) && !was(v1.ConditionTypeInitialized) {
		record(Initialized)
	}
	if meta.IsStatusConditionTrue(nc.Status.Conditions, v1.ConditionTypeDrifted) && !was(v1.ConditionTypeDrifted) {
		record(Drifted)
	}
	if nc.DeletionTimestamp != nil && (!known || old.DeletionTimestamp == nil) {
		record(Deleting)
	}
	c.last[nc.Name] = nc
	if typ == watch.Deleted {
		delete(c.claims, nc.Name)
		record(Gone)
	} else {
		c.claims[nc.Name] = nc
	}
	c.checkBudgets(now)
	c.checkReservations(now)
}

// checkBudgets counts the NodeClaims deleting by reason against the
// budgets. The caller holds mu.
func (c *Checker) checkBudgets(now time.Time) {
	deleting := map[v1.DisruptionReason][]string{}
	total, voluntary := 0, 0
	for _, name := range slices.Sorted(maps.Keys(c.claims)) {
		nc := c.claims[name]
		if nc.DeletionTimestamp == nil {
			continue
		}
		total++
		r := reason(nc)
		if Voluntary(r) {
			voluntary++
		}
		deleting[r] = append(deleting[r], name)
	}
	c.peak = max(c.peak, total)
	c.peakVol = max(c.peakVol, voluntary)
	for _, r := range slices.Sorted(maps.Keys(c.opts.Budgets)) {
		budget, names := c.opts.Budgets[r], deleting[r]
		if len(names) <= budget {
			c.overBudget[r] = false
			continue
		}
		if c.overBudget[r] {
			continue
		}
		c.overBudget[r] = true
		c.violate(now, "%d nodeclaims deleting at once for %s, the budget allows %d: %s", len(names), r, budget, c.describeClaims(names))
	}
}

// checkReservations counts the live NodeClaims in each reservation
// against its slots. The caller holds mu.
func (c *Checker) checkReservations(now time.Time) {
	in := map[string][]string{}
	for _, name := range slices.Sorted(maps.Keys(c.claims)) {
		nc := c.claims[name]
		if id := nc.Labels[v1.LabelCapacityReservationID]; id != "" && nc.DeletionTimestamp == nil {
			in[id] = append(in[id], name)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(c.opts.Reservations)) {
		slots, names := c.opts.Reservations[id], in[id]
		if len(names) <= slots {
			c.overReservation[id] = false
			continue
		}
		if c.overReservation[id] {
			continue
		}
		c.overReservation[id] = true
		c.violate(now, "%d live nodeclaims in reservation %s of %d slots: %s", len(names), id, slots, c.describeClaims(names))
	}
}

// describeClaims describes the NodeClaims named. The caller holds mu.
func (c *Checker) describeClaims(names []string) string {
	out := make([]string, 0, len(names))
	for _, name := range names {
		out = append(out, describeClaim(c.last[name]))
	}
	return strings.Join(out, ", ")
}
