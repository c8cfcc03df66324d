package lifecycle

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
)

// A refused launch is retried after LaunchRetryBase, then twice as long
// after each further failure, at most LaunchRetryMax apart: a new instance
// profile shows up in EC2 within seconds, a fixed policy within minutes,
// and the launch timeout ends the attempts in any case.
const (
	LaunchRetryBase = time.Second
	LaunchRetryMax  = time.Minute
)

// LaunchAttempts is what the caller remembers of a NodeClaim's failed
// launches: how many failed in a row and when the last did. It is not
// stored in the NodeClaim (the API has no field for it), so a restarted
// controller starts again from none, as a rate limiter would.
type LaunchAttempts struct {
	Failures int
	Last     time.Time
}

// Failed is a after one more failed launch at now.
func (a LaunchAttempts) Failed(now time.Time) LaunchAttempts {
	return LaunchAttempts{Failures: a.Failures + 1, Last: now}
}

// RetryAt is when the next launch may be tried: the zero time when none
// failed.
func (a LaunchAttempts) RetryAt() time.Time {
	if a.Failures <= 0 {
		return time.Time{}
	}
	return a.Last.Add(LaunchBackoff(a.Failures))
}

// LaunchBackoff is the wait after failures failed launches in a row.
func LaunchBackoff(failures int) time.Duration {
	d := LaunchRetryBase
	for i := 1; i < failures && d < LaunchRetryMax; i++ {
		d *= 2
	}
	return min(d, LaunchRetryMax)
}

// Event is an event to record on the NodeClaim.
type Event struct {
	Type, Reason, Message string
}

// LaunchFailure is everything the caller applies after a launch that
// failed or timed out, in this order: mark Unavailable, record Events,
// then delete the NodeClaim (Delete) or keep Attempts and set
// Launched=False with Reason and Message.
type LaunchFailure struct {
	// Unavailable are the offerings (and capacity types) to mark
	// unavailable (UnavailableOfferings.Mark); nil, none.
	Unavailable *cloudprovider.InsufficientCapacityError
	// Events are recorded on the NodeClaim, in order.
	Events []Event
	// Delete: the NodeClaim is deleted and its pods planned again at
	// once, on the offerings left; the caller forgets its attempts.
	Delete bool
	// Reason and Message are the Launched=False condition's when the
	// NodeClaim stays to be retried, and say why it was deleted when not.
	Reason, Message string
	// Attempts are the NodeClaim's failed launches after this one, to keep
	// when it stays: the next is tried at Attempts.RetryAt.
	Attempts LaunchAttempts
}

// maxMessageLength bounds a condition message and an event's: a fleet's
// answer can name hundreds of offerings.
const maxMessageLength = 1024

// OnLaunchError decides what follows a launch that failed at now with
// Create's error, after attempts failed launches. Whatever the error,
// the offerings it found without capacity are marked unavailable.
//
//   - Insufficient capacity (every offering's error a capacity or a
//     spot-only one): Delete, with an InsufficientCapacity event.
//   - A refusal (*cloudprovider.CreateError) or any other error:
//     Launched=False with the error's reason (derived from the cloud's
//     code when it gave one) and a LaunchFailed event whose message
//     names it; the NodeClaim is retried with LaunchBackoff until the
//     launch timeout.
//
// The spot service-linked role's code adds a
// SpotServiceLinkedRoleCreationFailed event, as the reference publishes
// one: spot stays unavailable while the role is missing.
func OnLaunchError(err error, attempts LaunchAttempts, now time.Time) LaunchFailure {
	out := LaunchFailure{Unavailable: cloudprovider.UnavailableIn(err)}
	msg := truncate(err.Error())
	if codes := cloudprovider.LaunchErrorCodesOf(err); slices.Contains(codes, string(cloudprovider.CodeServiceLinkedRoleCreationNotPermitted)) {
		out.Events = append(out.Events, Event{Type: corev1.EventTypeWarning, Reason: "SpotServiceLinkedRoleCreationFailed",
			Message: fmt.Sprintf("a spot launch failed with %s: the account has no spot service-linked role and Capstan may not create it; spot is unavailable until it exists", cloudprovider.CodeServiceLinkedRoleCreationNotPermitted)})
	}
	if cloudprovider.IsInsufficientCapacityError(err) {
		out.Delete = true
		out.Reason, out.Message = "InsufficientCapacity", msg
		out.Events = append(out.Events, Event{Type: corev1.EventTypeWarning, Reason: "InsufficientCapacity", Message: msg})
		return out
	}
	out.Reason, out.Message = "LaunchFailed", msg
	if ce, ok := cloudprovider.AsCreateError(err); ok && ce.Reason != "" {
		out.Reason = ce.Reason
	} else if cloudprovider.IsNodeClassNotReadyError(err) {
		out.Reason = "NodeClassNotReady"
	}
	out.Events = append(out.Events, Event{Type: corev1.EventTypeWarning, Reason: "LaunchFailed", Message: msg})
	out.Attempts = attempts.Failed(now)
	return out
}

// OnLaunchTimeout decides what follows when nc was not launched within
// timeout (Next said LaunchTimeout): it is deleted, so the provisioner
// plans its pods again without it as capacity on its way, with a
// LaunchTimeout event naming the last launch's failure if one finished.
func OnLaunchTimeout(nc *v1.NodeClaim, timeout time.Duration) LaunchFailure {
	why := "no launch attempt finished"
	if c := meta.FindStatusCondition(nc.Status.Conditions, v1.ConditionTypeLaunched); c != nil {
		why = "the last launch failed with " + c.Reason
	}
	msg := fmt.Sprintf("not launched within %s; %s", timeout, why)
	return LaunchFailure{Delete: true, Reason: "LaunchTimeout", Message: msg,
		Events: []Event{{Type: corev1.EventTypeWarning, Reason: "LaunchTimeout", Message: msg}}}
}

func truncate(s string) string {
	if len(s) <= maxMessageLength {
		return s
	}
	return strings.ToValidUTF8(s[:maxMessageLength-3], "") + "..."
}
