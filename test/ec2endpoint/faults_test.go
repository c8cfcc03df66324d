package ec2endpoint_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
)

// The profile's launch faults come back as per-override CreateFleet
// errors with EC2's codes and messages, beside the capacity errors, in a
// 200 answer that launched what it could.
func TestFleetLaunchFaults(t *testing.T) {
	for _, tc := range []struct {
		name     string
		faults   []simv1alpha1.LaunchFault
		ct       string
		want     outcome
		messages []string
	}{
		{"a refusal on every override", []simv1alpha1.LaunchFault{{Code: "UnauthorizedOperation"}}, v1.CapacityTypeOnDemand,
			outcome{Errors: []string{"m5.large/us-west-2a/on-demand: UnauthorizedOperation", "m5.large/us-west-2b/on-demand: UnauthorizedOperation"}},
			[]string{"You are not authorized to perform this operation.", "You are not authorized to perform this operation."}},
		{"the spot service-linked role", []simv1alpha1.LaunchFault{{Code: "AuthFailure.ServiceLinkedRoleCreationNotPermitted", CapacityType: v1.CapacityTypeSpot}}, v1.CapacityTypeSpot,
			outcome{Errors: []string{"m5.large/us-west-2b/spot: AuthFailure.ServiceLinkedRoleCreationNotPermitted", "m5.large/us-west-2a/spot: AuthFailure.ServiceLinkedRoleCreationNotPermitted"}},
			[]string{"The provided credentials do not have permission to create the service-linked role for EC2 Spot Instances.", "The provided credentials do not have permission to create the service-linked role for EC2 Spot Instances."}},
		{"one zone refused, the other launches", []simv1alpha1.LaunchFault{{Code: "InvalidParameterValue", Message: "Value (capstan-profile) for parameter iamInstanceProfile.name is invalid. Invalid IAM Instance Profile name", Zone: "us-west-2a"}},
			v1.CapacityTypeOnDemand, outcome{Launched: "m5.large/" + subnetB + "/on-demand", Errors: []string{"m5.large/us-west-2a/on-demand: InvalidParameterValue"}},
			[]string{"Value (capstan-profile) for parameter iamInstanceProfile.name is invalid. Invalid IAM Instance Profile name"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, profile(spotPrices, func(s *simv1alpha1.CloudProfileSpec) { s.LaunchFaults = tc.faults }))
			lt := createTemplate(t, f, "faults", nil)
			out := launch(t, f, fleetInput(lt, tc.ct, override("m5.large", subnetA), override("m5.large", subnetB)))
			if diff := cmp.Diff(tc.want, outcomeOf(out)); diff != "" {
				t.Errorf("fleet (-want +got):\n%s", diff)
			}
			var messages []string
			for _, e := range out.Errors {
				messages = append(messages, aws.ToString(e.ErrorMessage))
			}
			if diff := cmp.Diff(tc.messages, messages); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
			}
		})
	}
}

// A refused fleet's answer is replayed for its client token, even once
// the cause is gone, as EC2's idempotency promises: only a new token (a
// new attempt) launches.
func TestFleetTokenReplaysARefusal(t *testing.T) {
	f := newFixture(t, profile(func(s *simv1alpha1.CloudProfileSpec) {
		s.LaunchFaults = []simv1alpha1.LaunchFault{{Code: "InvalidParameterValue", Count: ptr.To(1)}}
	}))
	lt := createTemplate(t, f, "plain", nil)
	in := fleetInput(lt, v1.CapacityTypeOnDemand, override("m5.large", subnetA))
	in.ClientToken = aws.String("attempt-1")
	refused := outcome{Errors: []string{"m5.large/us-west-2a/on-demand: InvalidParameterValue"}}
	for range 2 {
		if diff := cmp.Diff(refused, outcomeOf(launch(t, f, in))); diff != "" {
			t.Errorf("attempt-1 (-want +got):\n%s", diff)
		}
	}
	in.ClientToken = aws.String("attempt-2")
	if got := outcomeOf(launch(t, f, in)); got.Launched != "m5.large/"+subnetA+"/on-demand" || len(got.Errors) > 0 {
		t.Errorf("attempt-2: %+v, want a launch", got)
	}
}
