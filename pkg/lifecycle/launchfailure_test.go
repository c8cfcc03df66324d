package lifecycle

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
)

func TestOnLaunchError(t *testing.T) {
	spot := cloudprovider.OfferingKey{CapacityType: v1.CapacityTypeSpot, InstanceType: "m5.large", Zone: "us-west-2a"}
	od := cloudprovider.OfferingKey{CapacityType: v1.CapacityTypeOnDemand, InstanceType: "m5.large", Zone: "us-west-2b"}
	launch := func(errs ...cloudprovider.OfferingError) error {
		return cloudprovider.NewLaunchError(errs, errors.New("launching nodeclaim nc-1"))
	}
	type summary struct {
		Delete bool
		Reason string
		Events []string // the events' reasons
		// Marks are the offerings to mark unavailable.
		Marks []cloudprovider.OfferingKey
		// Failures are the failed attempts kept: one more than before
		// when the NodeClaim stays, none when it is deleted.
		Failures int
	}
	for _, tc := range []struct {
		name string
		err  error
		want summary
		// inMessage must be in the condition message (and the event's).
		inMessage string
	}{
		{"insufficient capacity re-plans", launch(cloudprovider.OfferingError{Offering: od, Code: "InsufficientInstanceCapacity"}),
			summary{Delete: true, Reason: "InsufficientCapacity", Events: []string{"InsufficientCapacity"}, Marks: []cloudprovider.OfferingKey{od}}, ""},
		{"spot service-linked role alone: re-plan at once, with its event",
			launch(cloudprovider.OfferingError{Offering: spot, Code: "AuthFailure.ServiceLinkedRoleCreationNotPermitted"}),
			summary{Delete: true, Reason: "InsufficientCapacity", Events: []string{"SpotServiceLinkedRoleCreationFailed", "InsufficientCapacity"}, Marks: []cloudprovider.OfferingKey{spot}}, ""},
		{"unauthorized: Launched=False, retried", launch(cloudprovider.OfferingError{Offering: od, Code: "UnauthorizedOperation", Message: "You are not authorized to perform this operation."}),
			summary{Reason: "UnauthorizedOperation", Events: []string{"LaunchFailed"}, Failures: 2}, "UnauthorizedOperation"},
		{"refusal beside a capacity error is a refusal", launch(
			cloudprovider.OfferingError{Offering: spot, Code: "InsufficientInstanceCapacity"},
			cloudprovider.OfferingError{Offering: od, Code: "InvalidParameterValue", Message: "Invalid IAM Instance Profile name"}),
			summary{Reason: "InvalidParameterValue", Events: []string{"LaunchFailed"}, Marks: []cloudprovider.OfferingKey{spot}, Failures: 2}, "Invalid IAM Instance Profile name"},
		{"refusal beside the service-linked role still tells of spot", launch(
			cloudprovider.OfferingError{Offering: spot, Code: "AuthFailure.ServiceLinkedRoleCreationNotPermitted"},
			cloudprovider.OfferingError{Offering: od, Code: "UnauthorizedOperation"}),
			summary{Reason: "UnauthorizedOperation", Events: []string{"SpotServiceLinkedRoleCreationFailed", "LaunchFailed"}, Marks: []cloudprovider.OfferingKey{spot}, Failures: 2}, "UnauthorizedOperation"},
		{"Capstan's own failure keeps its reason", cloudprovider.NewCreateError("NoLaunchableOffering", errors.New("no subnet")),
			summary{Reason: "NoLaunchableOffering", Events: []string{"LaunchFailed"}, Failures: 2}, "no subnet"},
		{"NodeClass not ready", cloudprovider.NewNodeClassNotReadyError("default", nil),
			summary{Reason: "NodeClassNotReady", Events: []string{"LaunchFailed"}, Failures: 2}, "default"},
		{"anything else", errors.New("connection reset"), summary{Reason: "LaunchFailed", Events: []string{"LaunchFailed"}, Failures: 2}, "connection reset"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := OnLaunchError(tc.err, LaunchAttempts{Failures: 1, Last: t0}, t0.Add(time.Second))
			got := summary{Delete: f.Delete, Reason: f.Reason, Failures: f.Attempts.Failures}
			if f.Unavailable != nil {
				got.Marks = f.Unavailable.Offerings
			}
			if !f.Delete && !f.Attempts.Last.Equal(t0.Add(time.Second)) {
				t.Errorf("last attempt at %s, want now", f.Attempts.Last)
			}
			for _, e := range f.Events {
				if e.Type != corev1.EventTypeWarning {
					t.Errorf("event %s is %s, want Warning", e.Reason, e.Type)
				}
				got.Events = append(got.Events, e.Reason)
				if tc.inMessage != "" && e.Reason == "LaunchFailed" && !strings.Contains(e.Message, tc.inMessage) {
					t.Errorf("event message %q does not name %q", e.Message, tc.inMessage)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if !f.Delete && !strings.Contains(f.Message, tc.inMessage) {
				t.Errorf("condition message %q does not name %q", f.Message, tc.inMessage)
			}
		})
	}
}

func TestOnLaunchErrorTruncates(t *testing.T) {
	f := OnLaunchError(errors.New(strings.Repeat("é", 2*maxMessageLength)), LaunchAttempts{}, t0)
	if len(f.Message) > maxMessageLength || !strings.HasSuffix(f.Message, "...") {
		t.Errorf("message of %d bytes, want at most %d ending in ...", len(f.Message), maxMessageLength)
	}
}

func TestOnLaunchTimeout(t *testing.T) {
	refused := &v1.NodeClaim{}
	refused.Status.Conditions = []metav1.Condition{{Type: v1.ConditionTypeLaunched, Status: metav1.ConditionFalse, Reason: "UnauthorizedOperation"}}
	for _, tc := range []struct {
		name string
		nc   *v1.NodeClaim
		want LaunchFailure
	}{
		{"no attempt finished", &v1.NodeClaim{}, LaunchFailure{Delete: true, Reason: "LaunchTimeout",
			Message: "not launched within 5m0s; no launch attempt finished",
			Events:  []Event{{Type: corev1.EventTypeWarning, Reason: "LaunchTimeout", Message: "not launched within 5m0s; no launch attempt finished"}}}},
		{"the last launch refused", refused, LaunchFailure{Delete: true, Reason: "LaunchTimeout",
			Message: "not launched within 5m0s; the last launch failed with UnauthorizedOperation",
			Events:  []Event{{Type: corev1.EventTypeWarning, Reason: "LaunchTimeout", Message: "not launched within 5m0s; the last launch failed with UnauthorizedOperation"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, OnLaunchTimeout(tc.nc, 5*time.Minute)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
