package cloudprovider_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/fake"
)

// verdicts are what every Is helper says about one error.
type verdicts struct {
	InsufficientCapacity, NodeClaimNotFound, NodeClassNotReady, Create bool
}

func verdictsOf(err error) verdicts {
	return verdicts{
		InsufficientCapacity: cloudprovider.IsInsufficientCapacityError(err),
		NodeClaimNotFound:    cloudprovider.IsNodeClaimNotFoundError(err),
		NodeClassNotReady:    cloudprovider.IsNodeClassNotReadyError(err),
		Create:               cloudprovider.IsCreateError(err),
	}
}

func TestErrorHelpers(t *testing.T) {
	cause := errors.New("cloud said no")
	ice := cloudprovider.NewInsufficientCapacityError(cause)
	ice.Add(spotKey("m5.large", "a"), string(cloudprovider.CodeInsufficientInstanceCapacity))
	cases := []struct {
		name string
		err  error
		want verdicts
	}{
		{"nil", nil, verdicts{}},
		{"plain", cause, verdicts{}},
		{"insufficient capacity", ice, verdicts{InsufficientCapacity: true}},
		{"wrapped insufficient capacity", fmt.Errorf("launching nodeclaim x, %w", ice), verdicts{InsufficientCapacity: true}},
		{"not found", cloudprovider.NewNodeClaimNotFoundError("fake://a/1", nil), verdicts{NodeClaimNotFound: true}},
		{"wrapped twice not found", fmt.Errorf("a, %w", fmt.Errorf("b, %w", cloudprovider.NewNodeClaimNotFoundError("id", cause))), verdicts{NodeClaimNotFound: true}},
		{"not ready", fmt.Errorf("x, %w", cloudprovider.NewNodeClassNotReadyError("default", cause)), verdicts{NodeClassNotReady: true}},
		{"create", fmt.Errorf("x, %w", cloudprovider.NewCreateError("LaunchTemplateNotFound", cause)), verdicts{Create: true}},
		{"joined", errors.Join(cause, cloudprovider.NewCreateError("R", nil), cloudprovider.NewNodeClassNotReadyError("n", nil)), verdicts{NodeClassNotReady: true, Create: true}},
		{"message-only copy", errors.New(ice.Error()), verdicts{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, verdictsOf(tc.err)); diff != "" {
				t.Errorf("Is helpers (-want +got):\n%s", diff)
			}
			ignored := map[string]error{
				"IgnoreInsufficientCapacityError": cloudprovider.IgnoreInsufficientCapacityError(tc.err),
				"IgnoreNodeClaimNotFound":         cloudprovider.IgnoreNodeClaimNotFound(tc.err),
				"IgnoreNodeClassNotReady":         cloudprovider.IgnoreNodeClassNotReady(tc.err),
			}
			matched := map[string]bool{
				"IgnoreInsufficientCapacityError": tc.want.InsufficientCapacity,
				"IgnoreNodeClaimNotFound":         tc.want.NodeClaimNotFound,
				"IgnoreNodeClassNotReady":         tc.want.NodeClassNotReady,
			}
			for name, got := range ignored {
				want := tc.err
				if matched[name] {
					want = nil
				}
				if !errors.Is(got, want) || (want == nil) != (got == nil) {
					t.Errorf("%s() = %v, want %v", name, got, want)
				}
			}
		})
	}
}

func TestErrorsUnwrapToCause(t *testing.T) {
	cause := errors.New("cloud said no")
	for _, err := range []error{
		cloudprovider.NewInsufficientCapacityError(cause),
		cloudprovider.NewNodeClaimNotFoundError("id", cause),
		cloudprovider.NewNodeClassNotReadyError("default", cause),
		cloudprovider.NewCreateError("Reason", cause),
	} {
		if !errors.Is(fmt.Errorf("x, %w", err), cause) {
			t.Errorf("%T does not unwrap to its cause", err)
		}
		if !strings.Contains(err.Error(), cause.Error()) {
			t.Errorf("%T message %q lacks the cause", err, err.Error())
		}
	}
}

func TestInsufficientCapacityErrorMessage(t *testing.T) {
	reserved := cloudprovider.OfferingKey{CapacityType: v1.CapacityTypeReserved, InstanceType: "p5.48xlarge", Zone: "a", ReservationID: "cr-1"}
	ice := cloudprovider.NewInsufficientCapacityError(errors.New("fleet error"))
	ice.Add(spotKey("m5.large", "a"), string(cloudprovider.CodeInsufficientInstanceCapacity))
	ice.Add(spotKey("m5.large", "b"), string(cloudprovider.CodeMaxSpotInstanceCountExceeded))
	ice.Add(onDemandKey("c5.large", "a"), "")
	ice.Add(reserved, string(cloudprovider.CodeReservationCapacityExceeded))
	ice.Add(spotKey("m5.large", "a"), string(cloudprovider.CodeSpotMaxPriceTooLow)) // again: replaces the reason

	want := "insufficient capacity in 4 offering(s): " +
		"spot/m5.large/a (SpotMaxPriceTooLow), spot/m5.large/b (MaxSpotInstanceCountExceeded), " +
		"on-demand/c5.large/a, reserved/p5.48xlarge/a/cr-1 (ReservationCapacityExceeded); " +
		"unavailable account-wide: spot, fleet error"
	if got := ice.Error(); got != want {
		t.Errorf("Error() =\n%s\nwant\n%s", got, want)
	}
	if diff := cmp.Diff([]string{v1.CapacityTypeSpot}, ice.CapacityTypeWide); diff != "" {
		t.Errorf("CapacityTypeWide (-want +got):\n%s", diff)
	}
	if got := cloudprovider.NewInsufficientCapacityError(nil).Error(); got != "insufficient capacity, no compatible offering" {
		t.Errorf("empty Error() = %q", got)
	}
}

func TestInsufficientCapacityErrorZeroValue(t *testing.T) {
	var ice cloudprovider.InsufficientCapacityError
	ice.Add(onDemandKey("m5.large", "a"), "VcpuLimitExceeded")
	ice.Add(onDemandKey("m5.large", "a"), "")
	if _, ok := ice.Reasons[onDemandKey("m5.large", "a")]; ok || len(ice.Offerings) != 1 {
		t.Errorf("Offerings %v, Reasons %v", ice.Offerings, ice.Reasons)
	}
	// MaxSpotInstanceCountExceeded on a non-spot offering marks nothing wide.
	ice.Add(onDemandKey("m5.large", "b"), string(cloudprovider.CodeMaxSpotInstanceCountExceeded))
	if len(ice.CapacityTypeWide) != 0 {
		t.Errorf("CapacityTypeWide = %v", ice.CapacityTypeWide)
	}
}

func TestOtherErrorMessages(t *testing.T) {
	cases := []struct {
		err  error
		want string
	}{
		{cloudprovider.NewNodeClaimNotFoundError("fake://a/1", nil), `instance "fake://a/1" not found`},
		{cloudprovider.NewNodeClassNotReadyError("default", errors.New("no subnets")), `nodeclass "default" not ready, no subnets`},
		{cloudprovider.NewCreateError("LaunchTemplateNotFound", errors.New("boom")), "creating instance (LaunchTemplateNotFound), boom"},
	}
	for _, tc := range cases {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
	ce, ok := cloudprovider.AsCreateError(fmt.Errorf("x, %w", cloudprovider.NewCreateError("R", nil)))
	if !ok || ce.Reason != "R" {
		t.Errorf("AsCreateError() = %v, %v", ce, ok)
	}
}

func TestIsInsufficientCapacityCode(t *testing.T) {
	for _, code := range cloudprovider.CapacityErrorCodes() {
		if !cloudprovider.IsInsufficientCapacityCode(string(code)) {
			t.Errorf("IsInsufficientCapacityCode(%q) = false", code)
		}
	}
	want := []string{
		"InsufficientInstanceCapacity", "MaxSpotInstanceCountExceeded", "VcpuLimitExceeded",
		"UnfulfillableCapacity", "Unsupported", "InsufficientFreeAddressesInSubnet",
		"MaxFleetCountExceeded", "ReservationCapacityExceeded", "SpotMaxPriceTooLow",
	}
	var got []string
	for _, code := range cloudprovider.CapacityErrorCodes() {
		got = append(got, string(code))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("codes (-want +got):\n%s", diff)
	}
	for _, code := range []string{"", "RequestLimitExceeded", "InvalidParameterValue", "insufficientinstancecapacity"} {
		if cloudprovider.IsInsufficientCapacityCode(code) {
			t.Errorf("IsInsufficientCapacityCode(%q) = true", code)
		}
	}
}

// A NodeClass reference is checked against the kinds the provider
// serves, group and kind both, not by name alone.
func TestCheckNodeClassRef(t *testing.T) {
	cp := fake.New()
	cases := []struct {
		name string
		ref  *v1.NodeClassReference
		want string
	}{
		{"served", &v1.NodeClassReference{Group: "sim.capstan.dev", Kind: "SimNodeClass", Name: "default"}, ""},
		{"another provider's kind", &v1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"}, "kind EC2NodeClass.karpenter.k8s.aws is not served"},
		{"the right kind in another group", &v1.NodeClassReference{Group: "example.com", Kind: "SimNodeClass", Name: "default"}, "is not served"},
		{"unset", nil, "nodeClassRef is not set"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := cloudprovider.CheckNodeClassRef(cp, tc.ref)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("rejected: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !cloudprovider.IsNodeClassNotReadyError(err)):
				t.Fatalf("error %v; want a NodeClassNotReadyError containing %q", err, tc.want)
			}
		})
	}
}

func TestUnavailableIn(t *testing.T) {
	key := cloudprovider.OfferingKey{CapacityType: v1.CapacityTypeSpot, InstanceType: "m5.large", Zone: "us-west-2a"}
	ice := cloudprovider.NewInsufficientCapacityError(nil)
	ice.Add(key, string(cloudprovider.CodeInsufficientInstanceCapacity))
	refusedWith := cloudprovider.NewCloudCreateError("UnauthorizedOperation", errors.New("denied"))
	refusedWith.Unavailable = ice
	for _, tc := range []struct {
		name string
		err  error
		want *cloudprovider.InsufficientCapacityError
	}{
		{"nil", nil, nil},
		{"insufficient capacity, wrapped", fmt.Errorf("launching nodeclaim nc-1, %w", ice), ice},
		{"a refusal with offerings found without capacity", fmt.Errorf("launching nodeclaim nc-1, %w", refusedWith), ice},
		{"a refusal alone", cloudprovider.NewCloudCreateError("UnauthorizedOperation", errors.New("denied")), nil},
		{"anything else", errors.New("connection reset"), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := cloudprovider.UnavailableIn(tc.err); got != tc.want {
				t.Errorf("UnavailableIn = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestInsufficientCapacityErrorReason(t *testing.T) {
	coded := cloudprovider.OfferingKey{CapacityType: v1.CapacityTypeOnDemand, InstanceType: "m5.large", Zone: "us-west-2a"}
	bare := cloudprovider.OfferingKey{CapacityType: v1.CapacityTypeOnDemand, InstanceType: "m5.large", Zone: "us-west-2b"}
	ice := cloudprovider.NewInsufficientCapacityError(nil)
	ice.Add(coded, string(cloudprovider.CodeVcpuLimitExceeded))
	ice.Add(bare, "")
	if got := ice.Reason(coded); got != string(cloudprovider.CodeVcpuLimitExceeded) {
		t.Errorf("Reason(coded) = %q", got)
	}
	if got := ice.Reason(bare); got != "InsufficientCapacity" {
		t.Errorf("Reason(bare) = %q, want InsufficientCapacity", got)
	}
}
