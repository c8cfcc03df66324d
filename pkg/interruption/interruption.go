package interruption

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/effects"
)

const (
	// DefaultPreemptibleMargin is how long before a preemptible VM's
	// 24-hour limit Capstan starts replacing it within budgets.
	DefaultPreemptibleMargin = 30 * time.Minute
	// MaxPreemptibleMargin bounds the margin to half the preemptible
	// lifetime, so a replacement serves at least 12 hours: a margin near
	// the lifetime would replace every preemptible VM the moment it
	// launches, and its replacement too.
	MaxPreemptibleMargin = cloudprovider.PreemptibleLifetime / 2
	// PreemptionNotice is GCP's own notice before it stops a preemptible
	// VM: from then on the limit is handled as an interruption.
	PreemptionNotice = 30 * time.Second
)

// Options tune a Handler.
type Options struct {
	// PreemptibleMargin is DefaultPreemptibleMargin when zero.
	PreemptibleMargin time.Duration
}

// Action is what to do about one notice.
type Action struct {
	Notice    cloudprovider.InterruptionNotice
	NodeClaim string
	// Node is the NodeClaim's node, "" before it registered.
	Node string
	// Event is set the first time Capstan acts on the notice: report it on
	// the Node (or the NodeClaim before registration) under Notice.Kind.
	Event string
	// Received is set the first time the notice is seen (metrics).
	Received bool
	// MarkUnavailable: the notice says the spot pool is short; mark the
	// offering (Notice.InstanceType, Notice.Zone, spot) unavailable.
	MarkUnavailable bool
	// Interrupt: delete the NodeClaim now (disruption.MarkForceful with
	// reason Interrupted and the notice's deadline first). Forceful: no
	// budget, do-not-disrupt or PDB holds it past the deadline.
	Interrupt bool
	// Expect: set the NodeClaim's InterruptionExpected condition; the
	// disruption engine replaces it within the Drifted budget.
	Expect bool
}

// Decision is what a Step found.
type Decision struct {
	Actions []Action
	// WakeAt is when a notice held back now needs action (a preemptible
	// VM entering its margin or its notice); zero when none does.
	WakeAt time.Time
	// Effects are the actions' changes for an applier, in order.
	Effects []effects.Effect
	// Done are the notices acted on for good once Effects apply: the
	// NodeClaim interrupted (or already going), or a rebalance
	// recommendation reported. The caller acknowledges them to a source
	// that keeps notices (cloudprovider.InterruptionAcknowledger). A
	// notice no NodeClaim owns yet, or one held back, is not done.
	Done []cloudprovider.InterruptionNotice
}

// Claim is a NodeClaim and its NodePool (nil when gone), as a Step
// needs them.
type Claim struct {
	NodeClaim *v1.NodeClaim
	NodePool  *v1.NodePool
}

// Handler turns notices into actions. It remembers which notices it has
// reported, so each is reported once however often the cloud repeats it.
// Not safe for concurrent use.
type Handler struct {
	Options Options
	// seen holds the stage each (provider id, kind) was last reported at.
	seen map[key]stage
}

type key struct {
	providerID string
	kind       cloudprovider.InterruptionKind
}

type stage int

const (
	stageReceived stage = iota + 1
	stageExpected
	stageInterrupted
)

// Step decides over the outstanding notices and the NodeClaims (by
// provider id) at now. Notices for instances no NodeClaim owns are left
// to garbage collection; NodeClaims already deleted are not interrupted
// again unless the notice's deadline is earlier than the one they carry
// (Interrupt is idempotent for the caller).
func (h *Handler) Step(notices []cloudprovider.InterruptionNotice, claims map[string]Claim, now time.Time) Decision {
	if h.seen == nil {
		h.seen = map[key]stage{}
	}
	margin := h.Options.PreemptibleMargin
	if margin == 0 {
		margin = DefaultPreemptibleMargin
	}
	// A margin no longer than GCP's own notice leaves no expected stage:
	// the limit is handled at the notice, so wake then (not at the later
	// margin, after the instance should already have been interrupted).
	margin = max(margin, PreemptionNotice)
	var d Decision
	live := map[key]bool{}
	for _, n := range notices {
		k := key{n.ProviderID, n.Kind}
		live[k] = true
		claim, ok := claims[n.ProviderID]
		if !ok {
			continue
		}
		want := h.judge(n, claim, now, margin, &d)
		prev := h.seen[k]
		if want == 0 && prev == 0 {
			// Held back (a preemptible VM's limit, far off): not yet
			// received, so it is neither counted nor reported.
			continue
		}
		a := Action{Notice: n, NodeClaim: claim.NodeClaim.Name, Node: claim.NodeClaim.Status.NodeName}
		if prev == 0 {
			a.Received = true
			h.seen[k] = stageReceived
		}
		switch want {
		case stageInterrupted:
			a.Interrupt = claim.NodeClaim.DeletionTimestamp == nil || earlier(n.Deadline, claim.NodeClaim)
			a.MarkUnavailable = prev < stageInterrupted && spotShort(n.Kind)
		case stageExpected:
			a.Expect = claim.NodeClaim.DeletionTimestamp == nil && !expected(claim.NodeClaim, n.Kind)
		}
		if want > prev {
			a.Event = message(n, want, now)
			h.seen[k] = max(want, stageReceived)
		}
		if a.Received || a.Event != "" || a.Interrupt || a.Expect || a.MarkUnavailable {
			d.Actions = append(d.Actions, a)
			d.Effects = append(d.Effects, actionEffects(a, claim.NodeClaim, now)...)
		}
		// A rebalance recommendation is final at whichever stage the
		// NodePool asks for; every other kind once interrupted.
		if want == stageInterrupted || n.Kind == cloudprovider.RebalanceRecommendation {
			d.Done = append(d.Done, n)
		}
	}
	for _, k := range slices.Collect(maps.Keys(h.seen)) {
		if !live[k] {
			delete(h.seen, k)
		}
	}
	return d
}

// judge is the stage a notice calls for now; it moves d.WakeAt to when
// that changes.
func (h *Handler) judge(n cloudprovider.InterruptionNotice, claim Claim, now time.Time, margin time.Duration, d *Decision) stage {
	wake := func(t time.Time) {
		if t.After(now) && (d.WakeAt.IsZero() || t.Before(d.WakeAt)) {
			d.WakeAt = t
		}
	}
	switch n.Kind {
	case cloudprovider.RebalanceRecommendation:
		if claim.NodePool != nil && claim.NodePool.Annotations[v1.RebalanceAnnotationKey] == v1.RebalanceReplace {
			return stageExpected
		}
		return stageReceived
	case cloudprovider.PreemptibleMaxLifetime:
		switch {
		case !now.Before(n.Deadline.Add(-PreemptionNotice)):
			return stageInterrupted
		case !now.Before(n.Deadline.Add(-margin)):
			wake(n.Deadline.Add(-PreemptionNotice))
			return stageExpected
		}
		wake(n.Deadline.Add(-margin))
		return 0
	}
	return stageInterrupted
}

// spotShort: the notice means the cloud is short of that spot capacity.
func spotShort(k cloudprovider.InterruptionKind) bool {
	return k == cloudprovider.SpotInterruption || k == cloudprovider.AzureEviction
}

func earlier(deadline time.Time, nc *v1.NodeClaim) bool {
	if deadline.IsZero() {
		return false
	}
	s, ok := nc.Annotations[v1.NodeClaimTerminationTimestampAnnotationKey]
	if !ok {
		return true
	}
	at, err := time.Parse(time.RFC3339, s)
	return err != nil || deadline.Truncate(time.Second).Before(at)
}

func expected(nc *v1.NodeClaim, kind cloudprovider.InterruptionKind) bool {
	// Only a True condition counts: the disruption engine acts on True
	// alone, so a False one left with this reason must be set again.
	c := meta.FindStatusCondition(nc.Status.Conditions, v1.ConditionTypeInterruptionExpected)
	return c != nil && c.Status == metav1.ConditionTrue && c.Reason == string(kind)
}

// message is the event text for a notice at a stage.
func message(n cloudprovider.InterruptionNotice, s stage, now time.Time) string {
	text := n.Message
	if text == "" {
		text = string(n.Kind)
	}
	left := ""
	switch {
	case n.Deadline.IsZero():
	case !n.Deadline.After(now):
		// Already due (a failed status check, a state change seen late).
		left = fmt.Sprintf(" now (due at %s)", n.Deadline.UTC().Format(time.RFC3339))
	default:
		left = fmt.Sprintf(" at %s (in %s)", n.Deadline.UTC().Format(time.RFC3339), n.Deadline.Sub(now).Round(time.Second))
	}
	switch s {
	case stageInterrupted:
		return fmt.Sprintf("%s: the instance goes%s; draining it now and launching replacements", text, left)
	case stageExpected:
		if left == "" {
			return text + ": the instance is at risk; replacing it ahead of time within the Drifted budget"
		}
		return fmt.Sprintf("%s: the instance goes%s; replacing it ahead of time within the Drifted budget", text, left)
	}
	return text + "; no action (the NodePool does not opt into replacing on rebalance recommendations)"
}
