package invariants

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// DefaultGCPeriod is how long the cloud's inventory and the NodeClaims may
// disagree when Options.GCPeriod is not set: one collection interval plus
// the grace of a leaked instance, at the controller's defaults.
const DefaultGCPeriod = 2 * time.Minute

// Options say which invariants a Checker holds the cluster to. The zero
// value checks the PDBs' status and the rules added by RequirePDB only.
type Options struct {
	// Budgets bound the NodeClaims deleting at once for each disruption
	// reason (their DisruptionReason condition's). A reason absent from
	// the map is not limited: forceful reasons (Expired, Interrupted)
	// have no budget, nor have deletions without a reason.
	Budgets map[v1.DisruptionReason]int
	// Reservations bound the live (not deleting) NodeClaims in each
	// capacity reservation, by id: its slots.
	Reservations map[string]int
	// PendingBound is the longest a pod may stay Pending while it is not
	// being deleted; 0 leaves it unchecked (LongestPending still says).
	PendingBound time.Duration
	// SimState is the simulated cloud's state file, whose instances Watch
	// compares with the NodeClaims every second; "" leaves it unchecked.
	SimState string
	// GCPeriod is how long an instance of the NodePool may run without a
	// NodeClaim, or a live NodeClaim lack a running instance, before it is
	// a violation: garbage collection's worst case. 0 is DefaultGCPeriod.
	GCPeriod time.Duration
	// NodePool whose instances the inventory check owns (NodeClaim names
	// are "<nodepool>-<suffix>"). Watch sets it.
	NodePool string
	// IgnorePDBStatus leaves the PDB objects' own status unchecked: a
	// scenario where a forceful disruption may break a PDB at its
	// deadline. The rules of RequirePDB still hold.
	IgnorePDBStatus bool
}

// ClaimEventKind is what changed about a NodeClaim.
type ClaimEventKind string

// What the history records.
const (
	Created     ClaimEventKind = "created"
	Initialized ClaimEventKind = "initialized"
	Drifted     ClaimEventKind = "drifted"
	Deleting    ClaimEventKind = "deleting"
	Gone        ClaimEventKind = "gone"
)

// ClaimEvent is one change to a NodeClaim, in the order the API server
// reported them.
type ClaimEvent struct {
	Name string
	Kind ClaimEventKind
	At   time.Time
}

// Checker holds a scenario to its invariants as it is told of every
// change (ObservePod, ObserveClaim, ObservePDB, ObserveInventory), by
// Watch or by hand. It is safe for concurrent use.
type Checker struct {
	mu   sync.Mutex
	opts Options
	// report, when set, is told of every violation as it is found.
	report func(string)

	pods   map[string]*corev1.Pod
	claims map[string]*v1.NodeClaim
	// last is every NodeClaim as last seen, deleted ones included.
	last map[string]*v1.NodeClaim

	rules []*pdbRule
	pdbs  map[string]*pdbStatus

	violations []string
	peak       int
	peakVol    int
	// over are the budgets (by reason) and reservations (by id) exceeded
	// now: a breach is reported when it starts.
	overBudget      map[v1.DisruptionReason]bool
	overReservation map[string]bool
	history         []ClaimEvent

	pendingFrom map[string]time.Time
	longest     time.Duration
	longestPod  string

	inventory inventoryState
}

// New is a Checker holding the cluster to opts.
func New(opts Options) *Checker {
	if opts.GCPeriod <= 0 {
		opts.GCPeriod = DefaultGCPeriod
	}
	return &Checker{
		opts: opts, pods: map[string]*corev1.Pod{}, claims: map[string]*v1.NodeClaim{}, last: map[string]*v1.NodeClaim{},
		pdbs: map[string]*pdbStatus{}, overBudget: map[v1.DisruptionReason]bool{}, overReservation: map[string]bool{},
		pendingFrom: map[string]time.Time{}, inventory: newInventoryState(),
	}
}

// violate records a violation at now. The caller holds mu.
func (c *Checker) violate(now time.Time, format string, args ...any) {
	v := now.Format("15:04:05.000") + " " + fmt.Sprintf(format, args...)
	c.violations = append(c.violations, v)
	if c.report != nil {
		c.report(v)
	}
}

// Finish ends the watch at now: a pod still Pending stops counting, and
// one Pending longer than the bound is a violation.
func (c *Checker) Finish(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, key := range slices.Sorted(maps.Keys(c.pendingFrom)) {
		c.settle(key, now, "still Pending at the end")
	}
}

// Violations are the invariants broken so far, in order, each with its
// time.
func (c *Checker) Violations() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.violations)
}

// Peak is the most NodeClaims seen deleting at once, whatever the reason.
func (c *Checker) Peak() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.peak
}

// PeakVoluntary is the most NodeClaims seen deleting at once for a
// voluntary reason (Empty, Underutilized, Drifted), all together.
func (c *Checker) PeakVoluntary() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.peakVol
}

// LongestPending is the longest a pod first seen Pending stayed so, and
// the pod ("namespace/name").
func (c *Checker) LongestPending() (time.Duration, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.longest, c.longestPod
}

// History is the NodeClaims' changes in order.
func (c *Checker) History() []ClaimEvent {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.history)
}

// Claims are the NodeClaims that exist, as last seen, by name.
func (c *Checker) Claims() []*v1.NodeClaim {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.SortedFunc(maps.Values(c.claims), func(a, b *v1.NodeClaim) int { return strings.Compare(a.Name, b.Name) })
}

// Last is NodeClaim name as last seen, even once deleted; nil if never.
func (c *Checker) Last(name string) *v1.NodeClaim {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last[name]
}

// PreSpun checks that every NodeClaim of old was deleted only once a
// replacement (a NodeClaim not in old) had initialized for it and for
// every old one deleted before it; it returns the violations.
func PreSpun(history []ClaimEvent, old map[string]bool) []string {
	var out []string
	ready, deleted := 0, 0
	for _, e := range history {
		switch {
		case e.Kind == Initialized && !old[e.Name]:
			ready++
		case e.Kind == Deleting && old[e.Name]:
			deleted++
			if ready < deleted {
				out = append(out, fmt.Sprintf("%s nodeclaim %s was deleted with %d replacements initialized for %d deleted nodes",
					e.At.Format("15:04:05.000"), e.Name, ready, deleted))
			}
		}
	}
	return out
}

// Voluntary reports whether reason is a voluntary disruption's, one a
// budget limits.
func Voluntary(reason v1.DisruptionReason) bool {
	switch reason {
	case v1.DisruptionReasonEmpty, v1.DisruptionReasonUnderutilized, v1.DisruptionReasonDrifted:
		return true
	}
	return false
}

// reason is the NodeClaim's disruption reason, "" if it has none.
func reason(nc *v1.NodeClaim) v1.DisruptionReason {
	if c := meta.FindStatusCondition(nc.Status.Conditions, v1.ConditionTypeDisruptionReason); c != nil && c.Status == metav1.ConditionTrue {
		return v1.DisruptionReason(c.Reason)
	}
	return ""
}

// describeClaim names a NodeClaim with what the checks judge it by.
func describeClaim(nc *v1.NodeClaim) string {
	var parts []string
	if nc.Status.NodeName != "" {
		parts = append(parts, "node "+nc.Status.NodeName)
	}
	if nc.Status.ProviderID != "" {
		parts = append(parts, nc.Status.ProviderID)
	}
	if ct := nc.Labels[v1.CapacityTypeLabelKey]; ct != "" {
		parts = append(parts, ct)
	}
	if id := nc.Labels[v1.LabelCapacityReservationID]; id != "" {
		parts = append(parts, "reservation "+id)
	}
	if c := meta.FindStatusCondition(nc.Status.Conditions, v1.ConditionTypeDisruptionReason); c != nil && c.Status == metav1.ConditionTrue {
		parts = append(parts, fmt.Sprintf("disrupted for %s (%s)", c.Reason, c.Message))
	}
	if nc.DeletionTimestamp != nil {
		parts = append(parts, "deleting since "+nc.DeletionTimestamp.Format("15:04:05"))
	}
	return nc.Name + " (" + strings.Join(parts, ", ") + ")"
}

// describePod names a pod with what the checks judge it by.
func describePod(p *corev1.Pod) string {
	var parts []string
	if p.Spec.NodeName == "" {
		parts = append(parts, "Pending")
	} else {
		parts = append(parts, "on "+p.Spec.NodeName)
	}
	if podReady(p) {
		parts = append(parts, "Ready")
	} else {
		parts = append(parts, "not Ready")
	}
	if p.DeletionTimestamp != nil {
		parts = append(parts, "terminating")
	}
	return p.Namespace + "/" + p.Name + " (" + strings.Join(parts, ", ") + ")"
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
