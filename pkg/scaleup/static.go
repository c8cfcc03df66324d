package scaleup

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/disruption"
	"github.com/capstan-dev/capstan/pkg/effects"
	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/state"
)

// Events on a static NodePool, saying why it launched or removed nodes.
const (
	EventBelowReplicas    = "BelowReplicas"
	EventAboveReplicas    = "AboveReplicas"
	EventNodeLimitReached = "NodeLimitReached"
)

// DeletionReasonOverprovisioned is why a static NodePool's scale-down
// deletes a NodeClaim (the reference's "overprovisioned").
const DeletionReasonOverprovisioned = "Overprovisioned"

// StaticInput is a static NodePool and what it owns.
type StaticInput struct {
	NodePool *v1.NodePool
	// Usable: the NodePool can launch (the controller: it is Ready, as
	// the reference waits for; simulate: its NodeClass serves instance
	// types). An unusable one still scales down.
	Usable bool
	// NodeClaims the NodePool owns, deleting ones included.
	NodeClaims []*v1.NodeClaim
	// Nodes are the NodeClaims' nodes, by name.
	Nodes map[string]*corev1.Node
	// Pods are the pods bound to those nodes, by node name.
	Pods map[string][]*corev1.Pod
}

// StaticDecision is what a static NodePool does to keep spec.replicas
// nodes: launch (Create) or remove (Delete), never both.
type StaticDecision struct {
	NodePool string
	Desired  int64
	// Active are the NodeClaims neither deleting nor being replaced by a
	// disruption command (their node carries the disrupted taint):
	// Pending.
	Active, Deleting, Pending int64
	Create                    []*v1.NodeClaim
	Delete                    []*v1.NodeClaim
	// LimitReached: limits.nodes kept back replicas the NodePool lacks.
	LimitReached bool
}

// DecideStatic keeps a static NodePool at its replicas, as the
// reference's static provisioning and deprovisioning controllers do
// (pkg/controllers/static, v1.8; docs/static.md):
//   - below: launch the missing NodeClaims, counting those a disruption
//     command is replacing as present (their replacements are on the
//     way), within limits.nodes, which counts every NodeClaim, deleting
//     ones included;
//   - above: delete the surplus, counting only the active ones, so a
//     replacement in flight is never taken for surplus. The NodeClaims
//     not launched yet go first, then empty nodes (daemonset pods only,
//     none with do-not-disrupt), then the rest, least disruptive first
//     (disruption.RescheduleCost) with do-not-disrupt nodes last. Deleting drains
//     the node through termination, which honours PDBs and
//     do-not-disrupt until the terminationGracePeriod, as the reference's.
//
// It is pure; name names each new NodeClaim.
func DecideStatic(in StaticInput, now time.Time, name func(nodePool string) string) StaticDecision {
	np := in.NodePool
	d := StaticDecision{NodePool: np.Name}
	if !np.Static() || np.DeletionTimestamp != nil {
		return d
	}
	d.Desired = *np.Spec.Replicas
	counts := disruption.CountStatic(np, in.NodeClaims, in.Nodes)
	active := counts.Active
	d.Active, d.Deleting, d.Pending = int64(len(active)), counts.Deleting, counts.Pending
	if want := d.Desired - d.Active - d.Pending; want > 0 && in.Usable {
		allowed := min(want, counts.Room(np))
		d.LimitReached = allowed < want
		for range allowed {
			d.Create = append(d.Create, provisioning.NewNodeClaim(np, provisioning.StaticNodeClaim(np), name(np.Name)))
		}
	}
	if surplus := d.Active - d.Desired; surplus > 0 {
		d.Delete = scaleDownOrder(in, active, now)[:surplus]
	}
	return d
}

// scaleDownOrder orders the active NodeClaims, first to go first.
func scaleDownOrder(in StaticInput, active []*v1.NodeClaim, now time.Time) []*v1.NodeClaim {
	type ranked struct {
		nc   *v1.NodeClaim
		rank int // 0 not launched, 1 empty, 2 busy, 3 do-not-disrupt
		cost float64
	}
	rs := make([]ranked, 0, len(active))
	for _, nc := range active {
		r := ranked{nc: nc}
		if nc.Status.ProviderID != "" {
			var moving []*corev1.Pod
			protected := false
			for _, p := range in.Pods[nc.Status.NodeName] {
				if state.IsTerminal(p) {
					continue
				}
				protected = protected || state.DoNotDisruptOf(p, now).Active
				if !state.IsDaemonSetPod(p) {
					moving = append(moving, p)
				}
			}
			switch {
			case protected:
				r.rank = 3
			case len(moving) == 0:
				r.rank = 1
			default:
				r.rank = 2
			}
			r.cost = disruption.RescheduleCost(disruption.Candidate{NodeClaim: nc, Pods: moving})
		}
		rs = append(rs, r)
	}
	slices.SortStableFunc(rs, func(a, b ranked) int {
		return cmp.Or(cmp.Compare(a.rank, b.rank), cmp.Compare(a.cost, b.cost), strings.Compare(a.nc.Name, b.nc.Name))
	})
	out := make([]*v1.NodeClaim, len(rs))
	for i, r := range rs {
		out[i] = r.nc
	}
	return out
}

// Effects are the NodeClaims created (each counted) and deleted, with an
// event on the NodePool saying why.
func (d StaticDecision) Effects() []effects.Effect {
	var out []effects.Effect
	ref := effects.NodePoolRef(d.NodePool)
	present := d.Active + d.Pending
	if len(d.Create) > 0 {
		out = append(out, effects.Event{Object: ref, Type: corev1.EventTypeNormal, Reason: EventBelowReplicas, Action: "Provision",
			Message: fmt.Sprintf("launching %d nodeclaims: %d of %d replicas present", len(d.Create), present, d.Desired)})
	}
	for _, nc := range d.Create {
		out = append(out, effects.CreateNodeClaim{NodeClaim: nc}, effects.Metric{Name: MetricNodeClaimsCreated, Labels: []string{d.NodePool, "any"}, Value: 1})
	}
	if d.LimitReached {
		out = append(out, effects.Event{Object: ref, Type: corev1.EventTypeWarning, Reason: EventNodeLimitReached, Action: "Provision",
			Message: fmt.Sprintf("limits.nodes keeps the nodepool at %d of %d replicas", present+int64(len(d.Create)), d.Desired)})
	}
	if len(d.Delete) > 0 {
		names := make([]string, len(d.Delete))
		for i, nc := range d.Delete {
			names[i] = nc.Name
		}
		out = append(out, effects.Event{Object: ref, Type: corev1.EventTypeNormal, Reason: EventAboveReplicas, Action: "Deprovision",
			Message: fmt.Sprintf("deleting nodeclaims %s: %d replicas active, %d desired", strings.Join(names, ", "), d.Active, d.Desired)})
	}
	for _, nc := range d.Delete {
		out = append(out, effects.DeleteNodeClaim{Name: nc.Name, Reason: DeletionReasonOverprovisioned})
	}
	return out
}
