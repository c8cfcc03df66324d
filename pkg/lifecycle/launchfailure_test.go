package lifecycle

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

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
		Replan bool
		Reason string
		Events []string // reason: first words of the message
	}
	for _, tc := range []struct {
		name string
		err  error
		want summary
		// inMessage must be in the condition message (and the event's).
		inMessage string
	}{
		{"insufficient capacity re-plans", launch(cloudprovider.OfferingError{Offering: od, Code: "InsufficientInstanceCapacity"}),
			summary{Replan: true, Events: []string{"InsufficientCapacity"}}, ""},
		{"spot service-linked role alone: re-plan at once, with its event",
			launch(cloudprovider.OfferingError{Offering: spot, Code: "AuthFailure.ServiceLinkedRoleCreationNotPermitted"}),
			summary{Replan: true, Events: []string{"SpotServiceLinkedRoleCreationFailed", "InsufficientCapacity"}}, ""},
		{"unauthorized: Launched=False, retried", launch(cloudprovider.OfferingError{Offering: od, Code: "UnauthorizedOperation", Message: "You are not authorized to perform this operation."}),
			summary{Reason: "UnauthorizedOperation", Events: []string{"LaunchFailed"}}, "UnauthorizedOperation"},
		{"refusal beside a capacity error is a refusal", launch(
			cloudprovider.OfferingError{Offering: spot, Code: "InsufficientInstanceCapacity"},
			cloudprovider.OfferingError{Offering: od, Code: "InvalidParameterValue", Message: "Invalid IAM Instance Profile name"}),
			summary{Reason: "InvalidParameterValue", Events: []string{"LaunchFailed"}}, "Invalid IAM Instance Profile name"},
		{"refusal beside the service-linked role still tells of spot", launch(
			cloudprovider.OfferingError{Offering: spot, Code: "AuthFailure.ServiceLinkedRoleCreationNotPermitted"},
			cloudprovider.OfferingError{Offering: od, Code: "UnauthorizedOperation"}),
			summary{Reason: "UnauthorizedOperation", Events: []string{"SpotServiceLinkedRoleCreationFailed", "LaunchFailed"}}, "UnauthorizedOperation"},
		{"Capstan's own failure keeps its reason", cloudprovider.NewCreateError("NoLaunchableOffering", errors.New("no subnet")),
			summary{Reason: "NoLaunchableOffering", Events: []string{"LaunchFailed"}}, "no subnet"},
		{"NodeClass not ready", cloudprovider.NewNodeClassNotReadyError("default", nil),
			summary{Reason: "NodeClassNotReady", Events: []string{"LaunchFailed"}}, "default"},
		{"anything else", errors.New("connection reset"), summary{Reason: "LaunchFailed", Events: []string{"LaunchFailed"}}, "connection reset"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := OnLaunchError(tc.err)
			got := summary{Replan: f.Replan, Reason: f.Reason}
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
			if !f.Replan && !strings.Contains(f.Message, tc.inMessage) {
				t.Errorf("condition message %q does not name %q", f.Message, tc.inMessage)
			}
		})
	}
}

func TestOnLaunchErrorTruncates(t *testing.T) {
	f := OnLaunchError(errors.New(strings.Repeat("é", 2*maxMessageLength)))
	if len(f.Message) > maxMessageLength || !strings.HasSuffix(f.Message, "...") {
		t.Errorf("message of %d bytes, want at most %d ending in ...", len(f.Message), maxMessageLength)
	}
}
