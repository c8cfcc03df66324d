package simulator

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/disruption"
	"github.com/capstan-dev/capstan/pkg/provisioning"
)

// notEvictedFor is how long pods stay bound to a node that stopped
// responding before kube-controller-manager evicts them: the
// not-ready toleration the API server adds to every pod.
const notEvictedFor = 300 * time.Second

// recorder keeps what the run reports: every launched node from launch
// to deletion, the events, each pending pod's reason and the samples.
type recorder struct {
	start time.Time
	// nodes are the records by NodeClaim name; byProviderID indexes
	// them by instance, and order lists them by launch (records), so
	// no lookup scans every node.
	nodes        map[string]*nodeRecord
	byProviderID map[string]*nodeRecord
	order        []*nodeRecord
	events       []Event
	// reasons are pending pods' latest reasons, "Reason: message": a
	// warning, or the node they were nominated to; warned their latest
	// warning, reported as an event when it changes.
	reasons, warned map[string]string
	// ends are the latest notice kind per provider id, which names why
	// it ended.
	ends map[string]string
	// deletions are why the step that deleted a NodeClaim said it did
	// (effects.DeleteNodeClaim's Reason), by NodeClaim name.
	deletions map[string]string
	samples   []Sample
	// unpriced are the nodes launched whose price is not known yet.
	unpriced []*nodeRecord
	// scores are the moves Balanced NodePools scored (scores.go);
	// lastScores the latest of each move.
	scores     []ConsolidationScore
	lastScores map[string]disruption.MoveScore
}

type nodeRecord struct {
	Node
	providerID string
	launched   time.Time
	// ended is when billing stopped: deletion, or a stop.
	ended   time.Time
	stopped bool
	evictAt time.Time
	// accrued is what the node cost before priceSince, when its price
	// changed (its reservation ended); zero priceSince means launched.
	accrued    float64
	priceSince time.Time
	// registered is set once its Node registered, after the events
	// recorded before it (events[:sinceEvent]).
	registered bool
	sinceEvent int
}

// cost is what the node cost from launch until end.
func (rec *nodeRecord) cost(end time.Time) float64 {
	since := rec.priceSince
	if since.IsZero() {
		since = rec.launched
	}
	return rec.accrued + rec.PricePerHour*end.Sub(since).Hours()
}

func newRecorder(start time.Time) *recorder {
	return &recorder{start: start, nodes: map[string]*nodeRecord{}, byProviderID: map[string]*nodeRecord{}, reasons: map[string]string{}, warned: map[string]string{}, ends: map[string]string{}, deletions: map[string]string{}}
}

func (r *recorder) event(now time.Time, kind, object, message string) {
	r.events = append(r.events, Event{At: offset(r.start, now), Kind: kind, Object: object, Message: message})
}

// reported are the events as the report shows them: it follows a node
// by its Node once it has one, so an event on a registered NodeClaim is
// shown on its Node, and the controller's habit of recording an event on
// both (for `kubectl describe` of either) shows once.
func (r *recorder) reported() []Event {
	out := make([]Event, 0, len(r.events))
	seen := map[Event]bool{}
	for i, e := range r.events {
		if claim, ok := strings.CutPrefix(e.Object, "nodeclaim/"); ok {
			if rec := r.nodes[claim]; rec != nil && rec.registered && i >= rec.sinceEvent {
				e.Object = "node/" + rec.Name
			}
		}
		if seen[e] {
			continue
		}
		seen[e] = true
		out = append(out, e)
	}
	return out
}

// launched starts a node's record when its NodeClaim records an instance
// (the Launched event is the lifecycle's). Without a price yet, it comes
// with priced, once per step, so the cloud's inventory is read once for a
// step's launches, not once each.
func (r *recorder) launched(now time.Time, nc *v1.NodeClaim, price float64) {
	rec := &nodeRecord{
		Node: Node{
			Name: nc.Name, NodeClaim: nc.Name, NodePool: nc.Labels[v1.NodePoolLabelKey],
			InstanceType: nc.Labels[v1.LabelInstanceType], Zone: nc.Labels[v1.LabelZone],
			CapacityType: nc.Labels[v1.CapacityTypeLabelKey], ReservationID: nc.Labels[v1.LabelCapacityReservationID],
			PricePerHour: price, LaunchedAt: offset(r.start, now), Pods: []string{},
			Flavor: nc.Annotations[provisioning.FlavorAnnotationKey],
		},
		providerID: nc.Status.ProviderID, launched: now,
	}
	r.nodes[nc.Name] = rec
	r.byProviderID[rec.providerID] = rec
	i, _ := slices.BinarySearchFunc(r.order, rec, launchOrder)
	r.order = slices.Insert(r.order, i, rec)
	if price == 0 {
		r.unpriced = append(r.unpriced, rec)
	}
}

// priced sets the price of the nodes launched since it last ran, from the
// prices by provider id.
func (r *recorder) priced(prices func() map[string]float64) {
	if len(r.unpriced) == 0 {
		return
	}
	byID := prices()
	for _, rec := range r.unpriced {
		rec.PricePerHour = byID[rec.providerID]
	}
	r.unpriced = r.unpriced[:0]
}

func (r *recorder) registered(claim, node string) {
	if rec := r.nodes[claim]; rec != nil {
		rec.Name = node
		rec.registered, rec.sinceEvent = true, len(r.events)
	}
}

// deleted ends a node's record with the pods it had.
func (r *recorder) deleted(now time.Time, claim, reason string, pods []*corev1.Pod) {
	rec := r.nodes[claim]
	if rec == nil {
		return
	}
	rec.DeletedAt, rec.DeletionReason = offset(r.start, now), reason
	if !rec.stopped {
		rec.ended = now
	}
	for _, p := range pods {
		rec.Pods = append(rec.Pods, podKey(p))
	}
	r.event(now, "NodeDeleted", "node/"+rec.Name, fmt.Sprintf("%s (%s); %d pods displaced", reason, rec.InstanceType, len(pods)))
}

// repriced records that a reserved node runs on as on-demand at price
// from now (its reservation ended): its record shows the capacity type
// and price in force at the end, and its cost accrues at each price in
// turn.
func (r *recorder) repriced(now time.Time, claim string, price float64) {
	rec := r.nodes[claim]
	if rec == nil {
		return
	}
	rec.accrued, rec.priceSince = rec.cost(now), now
	rec.CapacityType, rec.ReservationID, rec.PricePerHour = v1.CapacityTypeOnDemand, "", price
}

// disrupted records when disruption tainted a node for removal.
func (r *recorder) disrupted(now time.Time, claim string) {
	if rec := r.nodes[claim]; rec != nil {
		rec.DisruptedAt = offset(r.start, now)
	}
}

// undisrupted forgets it again: the command was abandoned.
func (r *recorder) undisrupted(claim string) {
	if rec := r.nodes[claim]; rec != nil {
		rec.DisruptedAt = ""
	}
}

// notice remembers a notice as why its instance may end and, when
// message is set (the interruption handler acting on it), reports it.
func (r *recorder) notice(now time.Time, n cloudprovider.InterruptionNotice, message string) {
	r.ends[n.ProviderID] = string(n.Kind)
	if message == "" {
		return
	}
	object := n.ProviderID
	if rec := r.byProviderID[n.ProviderID]; rec != nil {
		object = "node/" + rec.Name
	}
	r.event(now, string(n.Kind), object, message)
}

// endReason names why an instance is gone: its last notice, else def.
func (r *recorder) endReason(providerID, def string) string {
	if kind, ok := r.ends[providerID]; ok {
		return kind
	}
	return def
}

// stop records, once, that a node's instance stopped: billing ends and
// its pods are evicted after the not-ready toleration.
func (r *recorder) stop(now time.Time, node *corev1.Node) bool {
	rec := r.byProviderID[node.Spec.ProviderID]
	if rec == nil || rec.stopped {
		return false
	}
	rec.stopped, rec.ended, rec.evictAt = true, now, now.Add(notEvictedFor)
	r.event(now, "InstanceStopped", "node/"+node.Name, fmt.Sprintf("the instance stopped; its pods are evicted in %s", notEvictedFor))
	return true
}

// evictAt is when a stopped node's pods are evicted.
func (r *recorder) evictAt(node *corev1.Node) (time.Time, bool) {
	rec := r.byProviderID[node.Spec.ProviderID]
	if rec == nil || rec.Name != node.Name || !rec.stopped || rec.DeletedAt != "" {
		return time.Time{}, false
	}
	return rec.evictAt, true
}

// pending records a pod's reason; a warning is reported as an event when
// it changes, a nomination (where the pod waits for a node) is not.
func (r *recorder) pending(now time.Time, pod string, warning bool, reason, message string) {
	text := reason + ": " + message
	r.reasons[pod] = text
	if !warning || r.warned[pod] == text {
		return
	}
	r.warned[pod] = text
	r.event(now, reason, "pod/"+pod, message)
}

func (r *recorder) bound(pod string) {
	delete(r.reasons, pod)
	delete(r.warned, pod)
}

// running are the nodes launched and neither deleted nor stopped, in
// launch order, so sums over them come out the same every run.
func (r *recorder) running() []*nodeRecord {
	var out []*nodeRecord
	for _, rec := range r.records() {
		if rec.ended.IsZero() {
			out = append(out, rec)
		}
	}
	return out
}

// sample appends the cluster's state at now when it differs from the
// last sample.
func (r *recorder) sample(now time.Time, pending int) {
	s := Sample{At: offset(r.start, now), Seconds: now.Sub(r.start).Seconds(), Nodes: byCapacityType(), PodsPending: pending}
	for _, rec := range r.running() {
		s.Nodes[rec.CapacityType]++
		s.CostPerHour += rec.PricePerHour
	}
	if n := len(r.samples); n > 0 {
		last := r.samples[n-1]
		if last.PodsPending == s.PodsPending && last.CostPerHour == s.CostPerHour && maps.Equal(last.Nodes, s.Nodes) {
			return
		}
		if last.At == s.At {
			r.samples = r.samples[:n-1]
		}
	}
	r.samples = append(r.samples, s)
}

// records are every node's record, by launch time then name.
func (r *recorder) records() []*nodeRecord { return r.order }

func launchOrder(a, b *nodeRecord) int {
	return cmp.Or(a.launched.Compare(b.launched), cmp.Compare(a.NodeClaim, b.NodeClaim))
}
