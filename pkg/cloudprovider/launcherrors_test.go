package cloudprovider_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
)

// Every EC2 code Capstan names, plus unknown ones, with its class and
// condition reason written out: the classes are the reference's
// (pkg/errors/errors.go unfulfillableCapacityErrorCodes; the
// service-linked role in instance.go updateUnavailableOfferingsCache),
// SpotMaxPriceTooLow Capstan's own.
func TestClassifyLaunchError(t *testing.T) {
	cases := map[string]struct {
		class  cloudprovider.LaunchErrorClass
		reason string
	}{
		"InsufficientInstanceCapacity":                      {cloudprovider.LaunchErrorCapacity, "InsufficientInstanceCapacity"},
		"MaxSpotInstanceCountExceeded":                      {cloudprovider.LaunchErrorCapacity, "MaxSpotInstanceCountExceeded"},
		"VcpuLimitExceeded":                                 {cloudprovider.LaunchErrorCapacity, "VcpuLimitExceeded"},
		"UnfulfillableCapacity":                             {cloudprovider.LaunchErrorCapacity, "UnfulfillableCapacity"},
		"Unsupported":                                       {cloudprovider.LaunchErrorCapacity, "Unsupported"},
		"InsufficientFreeAddressesInSubnet":                 {cloudprovider.LaunchErrorCapacity, "InsufficientFreeAddressesInSubnet"},
		"MaxFleetCountExceeded":                             {cloudprovider.LaunchErrorCapacity, "MaxFleetCountExceeded"},
		"ReservationCapacityExceeded":                       {cloudprovider.LaunchErrorCapacity, "ReservationCapacityExceeded"},
		"SpotMaxPriceTooLow":                                {cloudprovider.LaunchErrorCapacity, "SpotMaxPriceTooLow"},
		"AuthFailure.ServiceLinkedRoleCreationNotPermitted": {cloudprovider.LaunchErrorSpotOnly, "AuthFailureServiceLinkedRoleCreationNotPermitted"},
		"UnauthorizedOperation":                             {cloudprovider.LaunchErrorRefused, "UnauthorizedOperation"},
		"AuthFailure":                                       {cloudprovider.LaunchErrorRefused, "AuthFailure"},
		"InvalidParameterValue":                             {cloudprovider.LaunchErrorRefused, "InvalidParameterValue"},
		"InvalidParameterCombination":                       {cloudprovider.LaunchErrorRefused, "InvalidParameterCombination"},
		"InvalidLaunchTemplateName.NotFoundException":       {cloudprovider.LaunchErrorRefused, "InvalidLaunchTemplateNameNotFoundException"},
		"InvalidLaunchTemplateId.NotFound":                  {cloudprovider.LaunchErrorRefused, "InvalidLaunchTemplateIdNotFound"},
		"InvalidLaunchTemplateName.AlreadyExistsException":  {cloudprovider.LaunchErrorRefused, "InvalidLaunchTemplateNameAlreadyExistsException"},
		"InvalidAMIID.NotFound":                             {cloudprovider.LaunchErrorRefused, "InvalidAMIIDNotFound"},
		"InvalidSubnetID.NotFound":                          {cloudprovider.LaunchErrorRefused, "InvalidSubnetIDNotFound"},
		"InvalidGroup.NotFound":                             {cloudprovider.LaunchErrorRefused, "InvalidGroupNotFound"},
		"InvalidUserData.Malformed":                         {cloudprovider.LaunchErrorRefused, "InvalidUserDataMalformed"},
		"IdempotentParameterMismatch":                       {cloudprovider.LaunchErrorRefused, "IdempotentParameterMismatch"},
		"RequestLimitExceeded":                              {cloudprovider.LaunchErrorRefused, "RequestLimitExceeded"},
		"PendingVerification":                               {cloudprovider.LaunchErrorRefused, "PendingVerification"},
		// Unknown codes are refusals: retried with backoff, never taken
		// for capacity.
		"Client.SomethingNew":  {cloudprovider.LaunchErrorRefused, "ClientSomethingNew"},
		"insufficient-cpu":     {cloudprovider.LaunchErrorRefused, "InsufficientCpu"},
		"429 Too Many Request": {cloudprovider.LaunchErrorRefused, "Code429TooManyRequest"},
		"":                     {cloudprovider.LaunchErrorRefused, "LaunchFailed"},
	}
	var named []string
	for _, c := range cloudprovider.CapacityErrorCodes() {
		named = append(named, string(c))
	}
	for _, c := range cloudprovider.LaunchErrorCodes() {
		named = append(named, string(c))
	}
	for _, code := range named {
		if _, ok := cases[code]; !ok {
			t.Errorf("code %s is named but not in the table", code)
		}
	}
	for code, want := range cases {
		if got := cloudprovider.ClassifyLaunchError(code); got != want.class {
			t.Errorf("ClassifyLaunchError(%q) = %s, want %s", code, got, want.class)
		}
		reason := cloudprovider.ConditionReason(code)
		if reason != want.reason {
			t.Errorf("ConditionReason(%q) = %q, want %q", code, reason, want.reason)
		}
		// The reason must be one the API server takes on a condition.
		cond := metav1.Condition{Type: v1.ConditionTypeLaunched, Status: metav1.ConditionFalse, Reason: reason, LastTransitionTime: metav1.Now()}
		if errs := metav1validation.ValidateCondition(cond, field.NewPath("condition")); len(errs) > 0 {
			t.Errorf("ConditionReason(%q) = %q is not a valid condition reason: %v", code, reason, errs)
		}
	}
}

func TestNewLaunchError(t *testing.T) {
	spotA := spotKey("m5.large", "a")
	spotB := spotKey("c5.large", "b")
	odA := onDemandKey("m5.large", "a")
	oe := func(key cloudprovider.OfferingKey, code string) cloudprovider.OfferingError {
		return cloudprovider.OfferingError{Offering: key, Code: code, Message: code + " message"}
	}
	type marks struct {
		Offerings map[cloudprovider.OfferingKey]string
		Wide      []string
	}
	type result struct {
		Capacity bool   // an insufficient-capacity error
		Code     string // the refusal's code
		Reason   string
		Marks    marks
	}
	for _, tc := range []struct {
		name string
		errs []cloudprovider.OfferingError
		want result
	}{
		{"only capacity", []cloudprovider.OfferingError{oe(spotA, "InsufficientInstanceCapacity"), oe(spotB, "SpotMaxPriceTooLow")},
			result{Capacity: true, Marks: marks{Offerings: map[cloudprovider.OfferingKey]string{spotA: "InsufficientInstanceCapacity", spotB: "SpotMaxPriceTooLow"}}}},
		{"capacity and the spot service-linked role", []cloudprovider.OfferingError{oe(spotA, "InsufficientInstanceCapacity"), oe(spotB, "AuthFailure.ServiceLinkedRoleCreationNotPermitted")},
			result{Capacity: true, Marks: marks{Offerings: map[cloudprovider.OfferingKey]string{spotA: "InsufficientInstanceCapacity", spotB: "AuthFailure.ServiceLinkedRoleCreationNotPermitted"}, Wide: []string{v1.CapacityTypeSpot}}}},
		{"a refusal keeps the capacity marks", []cloudprovider.OfferingError{oe(spotA, "InsufficientInstanceCapacity"), oe(odA, "InvalidParameterValue"), oe(spotB, "UnauthorizedOperation")},
			result{Code: "InvalidParameterValue", Reason: "InvalidParameterValue", Marks: marks{Offerings: map[cloudprovider.OfferingKey]string{spotA: "InsufficientInstanceCapacity"}}}},
		{"a refusal keeps the spot-wide mark", []cloudprovider.OfferingError{oe(spotA, "AuthFailure.ServiceLinkedRoleCreationNotPermitted"), oe(odA, "UnauthorizedOperation")},
			result{Code: "UnauthorizedOperation", Reason: "UnauthorizedOperation", Marks: marks{Offerings: map[cloudprovider.OfferingKey]string{spotA: "AuthFailure.ServiceLinkedRoleCreationNotPermitted"}, Wide: []string{v1.CapacityTypeSpot}}}},
		{"only refusals", []cloudprovider.OfferingError{oe(odA, "Client.Unknown")},
			result{Code: "Client.Unknown", Reason: "ClientUnknown"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := cloudprovider.NewLaunchError(tc.errs, errors.New("launching nodeclaim nc"))
			var got result
			var ice *cloudprovider.InsufficientCapacityError
			if i, ok := cloudprovider.AsInsufficientCapacityError(err); ok {
				got.Capacity, ice = true, i
			}
			if ce, ok := cloudprovider.AsCreateError(err); ok {
				got.Code, got.Reason, ice = ce.Code, ce.Reason, ce.Unavailable
				if got.Capacity {
					t.Errorf("%v is both a refusal and an insufficient-capacity error", err)
				}
			}
			if ice != nil {
				got.Marks = marks{Offerings: ice.Reasons, Wide: ice.CapacityTypeWide}
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
