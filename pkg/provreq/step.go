package provreq

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	autoscalingv1 "k8s.io/autoscaler/cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/effects"
	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/state"
)

// Phase is where a request stands, for explain and simulate's report.
type Phase string

// The phases.
const (
	PhaseIgnored        Phase = "Ignored"
	PhasePending        Phase = "Pending"
	PhaseProvisioned    Phase = "Provisioned"
	PhaseBooked         Phase = "Booked"
	PhaseBookingExpired Phase = "BookingExpired"
	PhaseFailed         Phase = "Failed"
)

// Decision is one request's step: the conditions to set (only those that
// change), events, the virtual pods holding its capacity now and when to
// look again.
type Decision struct {
	Phase Phase
	// Reason and Message are the condition that decided the phase.
	Reason, Message string
	Conditions      []metav1.Condition
	Events          []effects.Event
	// Virtual are the request's pods still to be held by the solver: the
	// atomic class's pod sets, less one per pod consuming the request.
	Virtual []corev1.Pod
	// Claims name the NodeClaims of its atomic group.
	Claims []string
	// BookingLeft is how long the booked capacity is still held.
	BookingLeft time.Duration
	// ProvisionedAfter, set when this step provisions the request, is the
	// time since it was created.
	ProvisionedAfter time.Duration
	// Trigger asks the provisioner to solve now: the request's virtual
	// pods need capacity launched.
	Trigger   bool
	RequeueAt time.Time
}

// Effects are the decision's changes: its conditions set on the request,
// its events, a metric of the provisioned request's wait.
func (d Decision) Effects(pr *autoscalingv1.ProvisioningRequest) []effects.Effect {
	ref := effects.Ref{Kind: effects.KindProvisioningRequest, Namespace: pr.Namespace, Name: pr.Name}
	var out []effects.Effect
	for _, c := range d.Conditions {
		out = append(out, effects.SetCondition{Object: ref, Condition: c})
	}
	for _, e := range d.Events {
		out = append(out, e)
	}
	if d.ProvisionedAfter > 0 {
		out = append(out, effects.Observe{Name: MetricProvisionedSeconds, Value: d.ProvisionedAfter.Seconds()})
	}
	if d.Trigger {
		out = append(out, effects.TriggerSolve{Immediate: true})
	}
	if !d.RequeueAt.IsZero() {
		out = append(out, effects.RequeueAt{At: d.RequeueAt})
	}
	return out
}

// Metric names the steps' effects record.
const (
	MetricProvisionedSeconds = "capstan_provisioningrequest_provisioned_seconds"
)

// Decide steps one request at now. snapshot is the cluster as the
// provisioner sees it (existing nodes, in-flight NodeClaims, NodePools and
// their instance types); the request's pods are solved against it.
func Decide(r Request, snapshot state.Snapshot, opts Options, now time.Time) Decision {
	opts = opts.withDefaults()
	pr := r.Object
	class := pr.Spec.ProvisioningClassName
	if !Served(class) {
		return Decision{Phase: PhaseIgnored}
	}
	s := step{pr: pr, now: now, booking: opts.BookingDuration}
	if !meta.IsStatusConditionTrue(pr.Status.Conditions, autoscalingv1.Accepted) {
		s.set(autoscalingv1.Accepted, metav1.ConditionTrue, ReasonAccepted, MessageAccepted)
	}
	for _, c := range r.Claims {
		s.d.Claims = append(s.d.Claims, c.Name)
	}
	if c := meta.FindStatusCondition(pr.Status.Conditions, autoscalingv1.Failed); c != nil && c.Status == metav1.ConditionTrue {
		return s.at(PhaseFailed, c)
	}
	if c := meta.FindStatusCondition(pr.Status.Conditions, autoscalingv1.BookingExpired); c != nil && c.Status == metav1.ConditionTrue {
		return s.at(PhaseBookingExpired, c)
	}
	pods, err := PodsOf(pr, r.Templates)
	if err != nil {
		if grace := pr.CreationTimestamp.Add(opts.TemplateGrace); now.Before(grace) {
			s.d.Phase, s.d.RequeueAt = PhasePending, grace
			return s.d
		}
		s.fail(ReasonFailedToCreatePods, err.Error())
		return s.d
	}
	if c := meta.FindStatusCondition(pr.Status.Conditions, autoscalingv1.Provisioned); c != nil && c.Status == metav1.ConditionTrue {
		if class == autoscalingv1.ProvisioningClassCheckCapacity {
			// Nothing is held for a check (docs/batch.md).
			return s.at(PhaseProvisioned, c)
		}
		s.book(pods, r.Consumers, c.LastTransitionTime.Time, opts.BookingDuration)
		return s.d
	}
	if end := deadline(pr, opts.Expiry); !now.Before(end) {
		s.fail(ReasonExpired, MessageExpired)
		return s.d
	}
	s.d.Phase = PhasePending
	if class == autoscalingv1.ProvisioningClassCheckCapacity {
		s.check(pods, snapshot, opts.RetryInterval)
	} else {
		s.d.Virtual = held(r)
		s.atomic(pods, r.Claims, snapshot)
	}
	if end := deadline(pr, opts.Expiry); s.d.RequeueAt.IsZero() || end.Before(s.d.RequeueAt) {
		if s.d.Phase == PhasePending {
			s.d.RequeueAt = end
		}
	}
	return s.d
}

// VirtualPods are the virtual pods every solve holds for the requests
// (state.Objects.VirtualPods): an atomic request's pod sets until it is
// Failed or its booking ended (BookingExpired), less one per pod
// consuming it. They follow the conditions alone, as Cluster
// Autoscaler's booking does (conditions.ShouldCapacityBeBooked), so every
// shell sees the same set without a clock; Decide sets those conditions
// when their time comes (RequeueAt).
func VirtualPods(requests []Request) []corev1.Pod {
	var out []corev1.Pod
	for _, r := range requests {
		out = append(out, held(r)...)
	}
	return out
}

// held is one request's virtual pods.
func held(r Request) []corev1.Pod {
	pr := r.Object
	conds := pr.Status.Conditions
	if pr.Spec.ProvisioningClassName != autoscalingv1.ProvisioningClassBestEffortAtomicScaleUp ||
		meta.IsStatusConditionTrue(conds, autoscalingv1.Failed) || meta.IsStatusConditionTrue(conds, autoscalingv1.BookingExpired) {
		return nil
	}
	pods, err := PodsOf(pr, r.Templates)
	if err != nil {
		return nil
	}
	return unconsumed(pods, r.Consumers)
}

func bound(pods []*corev1.Pod) int {
	n := 0
	for _, p := range pods {
		if p.Spec.NodeName != "" {
			n++
		}
	}
	return n
}

// step accumulates one request's decision.
type step struct {
	pr      *autoscalingv1.ProvisioningRequest
	now     time.Time
	booking time.Duration
	d       Decision
}

func (s *step) ref() effects.Ref {
	return effects.Ref{Kind: effects.KindProvisioningRequest, Namespace: s.pr.Namespace, Name: s.pr.Name}
}

// set records a condition unless the request already has it as is.
func (s *step) set(typ string, status metav1.ConditionStatus, reason, message string) {
	s.d.Reason, s.d.Message = reason, message
	if c := meta.FindStatusCondition(s.pr.Status.Conditions, typ); c != nil && c.Status == status && c.Reason == reason && c.Message == message {
		return
	}
	s.d.Conditions = append(s.d.Conditions, metav1.Condition{
		Type: typ, Status: status, Reason: reason, Message: message,
		ObservedGeneration: s.pr.Generation, LastTransitionTime: metav1.NewTime(s.now),
	})
}

func (s *step) event(eventType, reason, message string) {
	s.d.Events = append(s.d.Events, effects.Event{Object: s.ref(), Type: eventType, Reason: reason, Message: message})
}

// at reports a phase the request already has.
func (s *step) at(p Phase, c *metav1.Condition) Decision {
	s.d.Phase, s.d.Reason, s.d.Message = p, c.Reason, c.Message
	return s.d
}

func (s *step) fail(reason, message string) {
	s.d.Phase = PhaseFailed
	s.set(autoscalingv1.Failed, metav1.ConditionTrue, reason, message)
	s.event(corev1.EventTypeWarning, "ProvisioningRequestFailed", message)
}

func (s *step) provisioned(reason, message string) {
	s.d.Phase = PhaseProvisioned
	s.set(autoscalingv1.Provisioned, metav1.ConditionTrue, reason, message)
	s.event(corev1.EventTypeNormal, "ProvisioningRequestProvisioned", message)
	s.d.ProvisionedAfter = s.now.Sub(s.pr.CreationTimestamp.Time)
}

func (s *step) notYet(reason, message string) {
	s.set(autoscalingv1.Provisioned, metav1.ConditionFalse, reason, message)
}

// check answers a check-capacity request: do its pods fit existing
// capacity plus what the NodePools could launch? Nothing is launched.
func (s *step) check(pods []corev1.Pod, snapshot state.Snapshot, retry time.Duration) {
	res := solve(snapshot, s.pr, pods)
	if len(res.Unplaced) == 0 {
		s.provisioned(ReasonCapacityIsFound, MessageCapacityIsFound)
		return
	}
	s.notYet(ReasonCapacityIsNotFound, fmt.Sprintf(messageCapacityIsNotFoundFmt, unplacedMessage(res.Unplaced, len(pods))))
	s.d.RequeueAt = s.now.Add(retry)
}

// atomic follows a best-effort-atomic request's launch: Provisioned once
// every NodeClaim of its group registered (the API's "created and
// registered"), or at once when its pods fit the nodes there are.
func (s *step) atomic(pods []corev1.Pod, claims []*v1.NodeClaim, snapshot state.Snapshot) {
	if len(claims) == 0 {
		res := solve(snapshot, s.pr, pods)
		switch {
		case len(res.Unplaced) > 0:
			s.notYet(ReasonCapacityIsNotFound, fmt.Sprintf(messageCapacityIsNotFoundFmt, unplacedMessage(res.Unplaced, len(pods))))
		case len(res.NewNodeClaims) == 0:
			s.provisioned(ReasonCapacityIsFound, MessageCapacityIsFound)
			s.booked()
		default:
			s.notYet(ReasonNodeClaimsLaunching, fmt.Sprintf("Launching %d NodeClaims for %d pods, all or none", len(res.NewNodeClaims), len(pods)))
			s.d.Trigger = true
		}
		return
	}
	registered := 0
	for _, c := range claims {
		if launch := meta.FindStatusCondition(c.Status.Conditions, v1.ConditionTypeLaunched); launch != nil && launch.Status == metav1.ConditionFalse {
			s.notYet(ReasonNodeClaimLaunchFailed, fmt.Sprintf("NodeClaim %s failed to launch (%s): everything launched for the request is released and capacity is tried again", c.Name, launch.Message))
			return
		}
		if meta.IsStatusConditionTrue(c.Status.Conditions, v1.ConditionTypeRegistered) {
			registered++
		}
	}
	want := max(groupSize(claims), len(claims))
	if registered == want {
		s.provisioned(ReasonCapacityIsProvisioned, fmt.Sprintf("Capacity is provisioned: %d NodeClaims registered", want))
		s.booked()
		return
	}
	s.notYet(ReasonNodeClaimsLaunching, fmt.Sprintf("%d of %d NodeClaims registered", registered, want))
}

// booked starts the booking of a request provisioned now.
func (s *step) booked() {
	s.d.BookingLeft = s.booking
	s.d.RequeueAt = s.now.Add(s.booking)
}

// book keeps a provisioned atomic request's capacity until its own pods
// are bound or the booking expires (Cluster Autoscaler's
// processors/provreq/processor.go: bookCapacity and refresh).
func (s *step) book(pods []corev1.Pod, consumers []*corev1.Pod, provisionedAt time.Time, booking time.Duration) {
	bound := bound(consumers)
	if bound >= len(pods) {
		s.d.Phase = PhaseBookingExpired
		s.set(autoscalingv1.BookingExpired, metav1.ConditionTrue, ReasonBookingConsumed, MessageBookingConsumed)
		s.event(corev1.EventTypeNormal, "ProvisioningRequestBookingConsumed", MessageBookingConsumed)
		return
	}
	end := provisionedAt.Add(booking)
	if !s.now.Before(end) {
		s.d.Phase = PhaseBookingExpired
		s.set(autoscalingv1.BookingExpired, metav1.ConditionTrue, ReasonReservationExpired, MessageReservationExpired)
		s.event(corev1.EventTypeNormal, "ProvisioningRequestBookingExpired", fmt.Sprintf("%s: %d of %d pods bound", MessageReservationExpired, bound, len(pods)))
		return
	}
	c := meta.FindStatusCondition(s.pr.Status.Conditions, autoscalingv1.Provisioned)
	s.d.Phase, s.d.Reason, s.d.Message = PhaseBooked, c.Reason, c.Message
	s.d.Virtual = unconsumed(pods, consumers) // as held's
	s.d.BookingLeft = end.Sub(s.now)
	s.d.RequeueAt = end
}

// unconsumed drops one virtual pod per consuming pod: a real pod takes
// its virtual pod's place, so the capacity is not counted twice. Pods are
// dropped from the last pod set back; the API does not say which set a
// consuming pod belongs to.
func unconsumed(pods []corev1.Pod, consumers []*corev1.Pod) []corev1.Pod {
	keep := max(len(pods)-len(consumers), 0)
	return pods[:keep]
}

// groupSize is the NodeClaim count the group's launch made, as its claims
// record it; 0 when none says.
func groupSize(claims []*v1.NodeClaim) int {
	n := 0
	for _, c := range claims {
		n = max(n, sizeOf(c))
	}
	return n
}

// solve places the request's pods on the snapshot's nodes and NodePools,
// after the capacity other requests hold (their virtual pods, not its
// own) and before what buffers keep warm, which yields to it. The result
// is the request's pods' alone.
func solve(snapshot state.Snapshot, pr *autoscalingv1.ProvisioningRequest, pods []corev1.Pod) provisioning.Result {
	in := snapshot.Input
	key := Key(pr)
	in.Holding = slices.DeleteFunc(slices.Clone(in.Holding), func(p *corev1.Pod) bool { return p.Annotations[state.VirtualPodAnnotationKey] == key })
	in.Yielding = nil
	in.Pods = make([]*corev1.Pod, len(pods))
	ours := map[types.UID]bool{}
	for i := range pods {
		in.Pods[i] = &pods[i]
		ours[pods[i].UID] = true
	}
	r := provisioning.Solve(in)
	var out provisioning.Result
	for _, u := range r.Unplaced {
		if ours[u.Pod.UID] {
			out.Unplaced = append(out.Unplaced, u)
		}
	}
	for _, c := range r.NewNodeClaims {
		if slices.ContainsFunc(c.Pods, func(p *corev1.Pod) bool { return ours[p.UID] }) {
			out.NewNodeClaims = append(out.NewNodeClaims, c)
		}
	}
	return out
}

// unplacedMessage says why the first pod left out could not be placed.
func unplacedMessage(unplaced []provisioning.Unplaced, total int) string {
	u := unplaced[0]
	return fmt.Sprintf("%d of %d pods cannot be placed; %s: %s", len(unplaced), total, u.Reason, u.Message)
}
