package disruption

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/scheduling"
)

// Return-to-preferred timings.
const (
	// DefaultReturnAfter is how long the preferred offering must have
	// been available before a fallback node returns to it.
	DefaultReturnAfter = 10 * time.Minute
	// MaxReturnBackoff bounds the wait after failed returns, which doubles
	// with each failure.
	MaxReturnBackoff = 4 * time.Hour
)

// ReturnPolicy is a NodePool's return-to-preferred policy, from its
// annotations (decision 17).
type ReturnPolicy struct {
	// Enabled returns fallback nodes to spot (ReturnToPreferred): on by
	// default, as spot is also cheaper.
	Enabled bool
	// Terms returns nodes to an earlier llmaz flavor or ordered
	// node-affinity term (ReturnToPreferredTerm): only when the policy
	// says Enabled, as the earlier term may cost more.
	Terms bool
	// After is how long the preferred offering must have been available.
	After time.Duration
}

// ReturnPolicyOf reads np's capstan.dev/return-to-preferred (unset: spot
// returns only; Enabled: flavor and ordered-term returns too; Disabled:
// none) and capstan.dev/return-to-preferred-after (a
// positive duration, default 10m). An error names the value Capstan does
// not know, as an *AnnotationError: the NodePool's ValidationSucceeded
// condition reports it, and its nodes do not return.
func ReturnPolicyOf(np *v1.NodePool) (ReturnPolicy, error) {
	p := ReturnPolicy{Enabled: true, After: DefaultReturnAfter}
	switch v, ok := np.Annotations[v1.ReturnToPreferredAnnotationKey]; {
	case !ok:
	case v == v1.ReturnToPreferredEnabled:
		p.Terms = true
	case v == v1.ReturnToPreferredDisabled:
		p.Enabled = false
	default:
		return ReturnPolicy{}, &AnnotationError{Key: v1.ReturnToPreferredAnnotationKey, Problem: fmt.Sprintf("%q is not %q or %q", v, v1.ReturnToPreferredEnabled, v1.ReturnToPreferredDisabled)}
	}
	if v, ok := np.Annotations[v1.ReturnToPreferredAfterAnnotationKey]; ok {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return ReturnPolicy{}, &AnnotationError{Key: v1.ReturnToPreferredAfterAnnotationKey, Problem: fmt.Sprintf("%q is not a positive duration", v)}
		}
		p.After = d
	}
	return p, nil
}

// AnnotationError is a NodePool annotation whose value Capstan does not
// know; pkg/admission reports it at the annotation's field path.
type AnnotationError struct {
	Key string
	// Problem says what is wrong with the value, quoting it.
	Problem string
}

// Error implements error.
func (e *AnnotationError) Error() string { return "annotation " + e.Key + ": " + e.Problem }

// ReturnToPreferred moves a node launched as a fallback back to the
// capacity it preferred once that is launchable again (issue 21): an
// on-demand node that fell back from a reservation or from spot
// (FallbackFrom) is replaced by a node of that capacity once it has been
// available, for its pods' instance types and zones, for the NodePool's
// return-to-preferred-after. The replacement may launch only as the
// capacity the node fell back from, so a return never lands on on-demand
// again, and is priced as the worst of those offerings: it must be
// cheaper than the node, so the move counts against the Underutilized
// budget. A return whose replacement fails waits, doubling with each
// failure (ReturnBackoff), and so do the NodePool's other fallback
// nodes, so a flapping spot pool does not churn nodes. It respects every
// blocker and uses the engine's orchestration: the replacement is up
// before the node drains.
type ReturnToPreferred struct{}

// Name implements Method.
func (ReturnToPreferred) Name() string { return "ReturnToPreferred" }

// Reason implements Method.
func (ReturnToPreferred) Reason() v1.DisruptionReason { return v1.DisruptionReasonUnderutilized }

// Returns implements Returning: a node returns from its fallback capacity.
func (ReturnToPreferred) Returns() Return { return ReturnFallback }

// Compute implements Method.
func (m ReturnToPreferred) Compute(env Env) Outcome {
	return returns(env, m, func(c Candidate) bool { return len(fallbackFrom(env, c)) > 0 },
		func(p ReturnPolicy) bool { return p.Enabled }, returnReplacement)
}

// returns runs return method m over the candidates that fellBack, where
// their NodePool may be consolidated and its policy has the method on: the first that has a
// replacement is the command; the others waiting get verdicts.
func returns(env Env, m Method, fellBack func(Candidate) bool, on func(ReturnPolicy) bool,
	replacement func(Env, Candidate, ReturnPolicy, poolBackoff) (*provisioning.NodeClaim, string, time.Time)) Outcome {
	out := Outcome{Command: Command{Method: m.Name(), Reason: m.Reason()}}
	backoff := poolBackoffs(env.Candidates, fellBack)
	for _, c := range env.Candidates {
		if !ConsolidationAllowed(c.NodePool) || !fellBack(c) {
			continue
		}
		policy, err := ReturnPolicyOf(c.NodePool)
		if err != nil || !on(policy) || !out.admit(c, m, EventDisruptionBlocked, env) {
			continue
		}
		r, why, wake := replacement(env, c, policy, backoff[c.NodePool.Name])
		if why != "" {
			out.Verdicts = append(out.Verdicts, verdict(c, m, EventDisruptionBlocked, VerdictReturnWaits, why))
			out.wake(wake, env.Now)
			continue
		}
		out.Command.Candidates, out.Command.Replacements = []Candidate{c}, []*provisioning.NodeClaim{r}
		return out
	}
	return out
}

// FallbackFrom is the capacity types nc, an on-demand node, fell back
// from and np still allows, in the order the cloud launches them (nil:
// it did not fall back). It fell back from a capacity type when the
// solver planned it as a fallback from it (the capstan.dev/fallback
// annotation) or its own requirements name it: the cloud launches
// reservations, then spot, before on-demand (CloudProvider.Create), so
// that capacity was unavailable. A reservation also needs one for the
// node's instance type in its zone among its NodePool's instance types
// its: without it, an on-demand node of a NodePool that allows reserved
// capacity would count as a fallback for ever.
func FallbackFrom(nc *v1.NodeClaim, np *v1.NodePool, its []*cloudprovider.InstanceType) []string {
	if nc.Labels[v1.CapacityTypeLabelKey] != v1.CapacityTypeOnDemand {
		return nil
	}
	allowed := scheduling.NewNodeSelectorRequirementsWithMinValues(np.Spec.Template.Spec.Requirements...).Get(v1.CapacityTypeLabelKey)
	planned := provisioning.FallbackFrom(nc.Annotations[provisioning.FallbackAnnotationKey])
	var from []string
	for _, ct := range []string{v1.CapacityTypeReserved, v1.CapacityTypeSpot} {
		if !allowed.Has(ct) || (!slices.Contains(planned, ct) && !requires(nc, ct)) {
			continue
		}
		if ct == v1.CapacityTypeReserved && !reservedIn(its, nc.Labels[v1.LabelInstanceType], nc.Labels[v1.LabelZone]) {
			continue
		}
		from = append(from, ct)
	}
	return from
}

// fallbackFrom is FallbackFrom for a candidate.
func fallbackFrom(env Env, c Candidate) []string {
	return FallbackFrom(c.NodeClaim, c.NodePool, env.InstanceTypes[c.NodePool.Name])
}

// requires reports whether nc's requirements name capacity type ct.
func requires(nc *v1.NodeClaim, ct string) bool {
	for _, r := range nc.Spec.Requirements {
		if r.Key == v1.CapacityTypeLabelKey && r.Operator == corev1.NodeSelectorOpIn && slices.Contains(r.Values, ct) {
			return true
		}
	}
	return false
}

// reservedIn reports whether instance type name has a reserved offering
// in zone among its, full or not.
func reservedIn(its []*cloudprovider.InstanceType, name, zone string) bool {
	for _, it := range its {
		if it.Name != name {
			continue
		}
		for _, o := range it.Offerings {
			if o.CapacityType == v1.CapacityTypeReserved && o.Zone == zone {
				return true
			}
		}
	}
	return false
}

// CapacityNames names capacity types as messages do: "spot", "reserved
// capacity", or both joined by "or".
func CapacityNames(cts []string) string {
	names := make([]string, len(cts))
	for i, ct := range cts {
		names[i] = ct
		if ct == v1.CapacityTypeReserved {
			names[i] = "reserved capacity"
		}
	}
	return strings.Join(names, " or ")
}

// returnReplacement is c's replacement on the capacity it fell back
// from, or why there is none yet and when that may change (zero: only a
// change in the cluster).
func returnReplacement(env Env, c Candidate, policy ReturnPolicy, pool poolBackoff) (*provisioning.NodeClaim, string, time.Time) {
	from := fallbackFrom(env, c)
	to := CapacityNames(from)
	if why, at := backingOff(c, pool, to, env.Now); why != "" {
		return nil, why, at
	}
	if !c.Priced {
		return nil, msgUnknownPrice, time.Time{}
	}
	// Cheap first: without a settled offering of that capacity in the
	// NodePool at all, no simulation can find one.
	if ok, wake := capacitySettled(env, c.NodePool.Name, from, policy.After); !ok {
		if wake.IsZero() {
			return nil, to + " is still unavailable", time.Time{}
		}
		return nil, fmt.Sprintf("%s is available again, but not for %s yet: returning at %s", to, policy.After, wake.UTC().Format(time.RFC3339)), wake
	}
	sim := env.SimulateKeepingPreferences([]Candidate{c})
	if len(sim.Unplaced) > 0 {
		u := sim.Unplaced[0]
		return nil, fmt.Sprintf("not all pods would schedule, pod %s/%s: %s", u.Pod.Namespace, u.Pod.Name, u.Message), time.Time{}
	}
	if len(sim.Replacements) != 1 {
		return nil, fmt.Sprintf("its pods need %d new nodes, not one", len(sim.Replacements)), time.Time{}
	}
	preferred := restrict(sim.Replacements[0], scheduling.NewRequirement(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, from...))
	if len(preferred.InstanceTypes) == 0 {
		return nil, to + " is still unavailable for its pods", time.Time{}
	}
	ready, wake := settled(preferred, env.Unavailable, policy.After, env.Now)
	if ready == nil {
		return nil, fmt.Sprintf("%s is available again, but not for %s yet: returning at %s", to, policy.After, wake.UTC().Format(time.RFC3339)), wake
	}
	cheaper := Cheaper(ready, c.Price)
	if cheaper == nil {
		return nil, to + " is not cheaper than the node", time.Time{}
	}
	return cheaper, "", time.Time{}
}

// capacitySettled reports whether any offering of capacity types cts of
// the NodePool's instance types is available and has been for after; if
// not, when the first will have been (zero: none is available).
func capacitySettled(env Env, pool string, cts []string, after time.Duration) (bool, time.Time) {
	var wake time.Time
	for _, it := range env.InstanceTypes[pool] {
		for _, o := range it.Offerings {
			if !slices.Contains(cts, o.CapacityType) || !o.IsAvailable() {
				continue
			}
			at := env.Unavailable.Until(o.Key(it.Name)).Add(after)
			if !env.Now.Before(at) {
				return true, time.Time{}
			}
			if wake.IsZero() || at.Before(wake) {
				wake = at
			}
		}
	}
	return false, wake
}

// settled keeps r's instance types every available offering of which
// has been available for after (none marked unavailable since
// now-after), and says when the next of the others will be.
func settled(r *provisioning.NodeClaim, history cloudprovider.UnavailableHistory, after time.Duration, now time.Time) (*provisioning.NodeClaim, time.Time) {
	var keep []*cloudprovider.InstanceType
	var names []string
	var wake time.Time
	for _, it := range r.InstanceTypes {
		ok := true
		for _, o := range it.Offerings {
			if !o.IsAvailable() || !o.CompatibleWith(r.Requirements) {
				continue
			}
			if at := history.Until(o.Key(it.Name)).Add(after); now.Before(at) {
				ok = false
				if wake.IsZero() || at.Before(wake) {
					wake = at
				}
			}
		}
		if ok {
			keep = append(keep, it)
			names = append(names, it.Name)
		}
	}
	if len(keep) == 0 {
		return nil, wake
	}
	out := restrict(r, scheduling.NewRequirement(v1.LabelInstanceType, corev1.NodeSelectorOpIn, names...))
	out.InstanceTypes = keep
	return out, wake
}

// poolBackoffs are each NodePool's latest return-not-before among its
// nodes that fellBack. A failed return backs off its whole NodePool: the
// other fallback nodes would fail on the same short pool.
func poolBackoffs(cs []Candidate, fellBack func(Candidate) bool) map[string]poolBackoff {
	out := map[string]poolBackoff{}
	for _, c := range cs {
		if !fellBack(c) {
			continue
		}
		if at, n := returnNotBefore(c.NodeClaim); at.After(out[c.NodePool.Name].until) {
			out[c.NodePool.Name] = poolBackoff{until: at, attempts: n}
		}
	}
	return out
}

// backingOff says why c's return (to what it returns to) must wait after
// failed returns of its own or its NodePool's, and until when; "" when it
// need not.
func backingOff(c Candidate, pool poolBackoff, to string, now time.Time) (string, time.Time) {
	if at, n := returnNotBefore(c.NodeClaim); now.Before(at) {
		return fmt.Sprintf("returning to %s waits until %s, after %d failed attempt(s)", to, at.UTC().Format(time.RFC3339), n), at
	}
	if now.Before(pool.until) {
		return fmt.Sprintf("returning to %s waits until %s, after %d failed attempt(s) in its NodePool", to, pool.until.UTC().Format(time.RFC3339), pool.attempts), pool.until
	}
	return "", time.Time{}
}

// poolBackoff is a NodePool's latest return-not-before among its
// fallback nodes, and that node's failed attempts.
type poolBackoff struct {
	until    time.Time
	attempts int
}

// returnNotBefore is when nc may next try to return, and after how many
// failed attempts; zero when it may now.
func returnNotBefore(nc *v1.NodeClaim) (time.Time, int) {
	n, _ := strconv.Atoi(nc.Annotations[v1.ReturnAttemptsAnnotationKey])
	// A hand-edited negative count is none: it must not shift by a
	// negative amount in ReturnBackoff.
	n = max(n, 0)
	at, err := time.Parse(time.RFC3339, nc.Annotations[v1.ReturnNotBeforeAnnotationKey])
	if err != nil {
		return time.Time{}, n
	}
	return at, n
}

// ReturnBackoff are the annotations a fallback NodeClaim gets when its
// return failed for want of capacity: one more attempt, and the next not
// before after × 2^attempts (at most MaxReturnBackoff) from now.
func ReturnBackoff(nc *v1.NodeClaim, np *v1.NodePool, now time.Time) map[string]string {
	after := DefaultReturnAfter
	if p, err := ReturnPolicyOf(np); err == nil {
		after = p.After
	}
	_, n := returnNotBefore(nc)
	if n < math.MaxInt {
		n++
	}
	// after << n only when it cannot pass the cap, so a long after
	// (24h after 17 failures) never overflows into a wait in the past.
	wait := MaxReturnBackoff
	if n < 63 && after <= MaxReturnBackoff>>n {
		wait = after << n
	}
	return map[string]string{
		v1.ReturnAttemptsAnnotationKey:  strconv.Itoa(n),
		v1.ReturnNotBeforeAnnotationKey: now.Add(wait).UTC().Format(time.RFC3339),
	}
}

// Backoff implements BackingOff: a failed return waits longer each time
// (ReturnBackoff).
func (ReturnToPreferred) Backoff(c Candidate, now time.Time) map[string]string {
	return ReturnBackoff(c.NodeClaim, c.NodePool, now)
}
