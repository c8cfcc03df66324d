package cloudprovider

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// LaunchErrorClass is what a cloud's launch error code means for the next
// launch (docs/controller.md, "Launch errors").
type LaunchErrorClass int

// Launch error classes.
const (
	// LaunchErrorRefused: the cloud refused the launch for a reason in the
	// account's configuration or permissions, or one Capstan does not
	// know. Another offering would be refused alike; the NodeClaim records
	// it (Launched=False) and is retried with backoff until the launch
	// timeout deletes it.
	LaunchErrorRefused LaunchErrorClass = iota
	// LaunchErrorCapacity: the offering has no capacity now; it is marked
	// unavailable and another is tried.
	LaunchErrorCapacity
	// LaunchErrorSpotOnly: the account cannot launch spot at all right now;
	// spot is marked unavailable account-wide and on-demand is tried.
	LaunchErrorSpotOnly
)

// String names the class.
func (c LaunchErrorClass) String() string {
	switch c {
	case LaunchErrorCapacity:
		return "Capacity"
	case LaunchErrorSpotOnly:
		return "SpotOnly"
	}
	return "Refused"
}

// LaunchErrorCode is a cloud error code a launch may fail with that is not
// an insufficient-capacity one (CapacityErrorCode).
type LaunchErrorCode string

// The non-capacity EC2 codes Capstan names (the EC2 API error code list,
// docs.aws.amazon.com/AWSEC2/latest/APIReference/errors-overview.html;
// the reference's pkg/errors/errors.go). Every code not named here is
// classed LaunchErrorRefused too.
const (
	// CodeServiceLinkedRoleCreationNotPermitted: the account has no spot
	// service-linked role and the caller may not create it; only spot
	// launches fail (the reference's updateUnavailableOfferingsCache).
	CodeServiceLinkedRoleCreationNotPermitted LaunchErrorCode = "AuthFailure.ServiceLinkedRoleCreationNotPermitted"
	CodeUnauthorizedOperation                 LaunchErrorCode = "UnauthorizedOperation"
	CodeAuthFailure                           LaunchErrorCode = "AuthFailure"
	// CodeInvalidParameterValue is, among others, "Invalid IAM Instance
	// Profile name" for a profile IAM created moments ago and EC2 does not
	// see yet: a retry a little later succeeds.
	CodeInvalidParameterValue             LaunchErrorCode = "InvalidParameterValue"
	CodeInvalidParameterCombination       LaunchErrorCode = "InvalidParameterCombination"
	CodeInvalidLaunchTemplateNameNotFound LaunchErrorCode = "InvalidLaunchTemplateName.NotFoundException"
	CodeInvalidLaunchTemplateIDNotFound   LaunchErrorCode = "InvalidLaunchTemplateId.NotFound"
	CodeInvalidAMIIDNotFound              LaunchErrorCode = "InvalidAMIID.NotFound"
	CodeInvalidSubnetIDNotFound           LaunchErrorCode = "InvalidSubnetID.NotFound"
	CodeInvalidGroupNotFound              LaunchErrorCode = "InvalidGroup.NotFound"
	CodeInvalidUserDataMalformed          LaunchErrorCode = "InvalidUserData.Malformed"
	CodeIdempotentParameterMismatch       LaunchErrorCode = "IdempotentParameterMismatch"
	CodeRequestLimitExceeded              LaunchErrorCode = "RequestLimitExceeded"
	CodePendingVerification               LaunchErrorCode = "PendingVerification"

	// CodeInvalidLaunchTemplateNameAlreadyExists: another launch made the
	// template first; Capstan uses it.
	CodeInvalidLaunchTemplateNameAlreadyExists LaunchErrorCode = "InvalidLaunchTemplateName.AlreadyExistsException"
)

// LaunchErrorCodes returns every non-capacity code Capstan names.
func LaunchErrorCodes() []LaunchErrorCode {
	return []LaunchErrorCode{
		CodeServiceLinkedRoleCreationNotPermitted, CodeUnauthorizedOperation, CodeAuthFailure, CodeInvalidParameterValue,
		CodeInvalidParameterCombination, CodeInvalidLaunchTemplateNameNotFound, CodeInvalidLaunchTemplateIDNotFound,
		CodeInvalidAMIIDNotFound, CodeInvalidSubnetIDNotFound, CodeInvalidGroupNotFound, CodeInvalidUserDataMalformed,
		CodeIdempotentParameterMismatch, CodeRequestLimitExceeded, CodePendingVerification, CodeInvalidLaunchTemplateNameAlreadyExists,
	}
}

// ClassifyLaunchError classes a cloud's launch error code.
func ClassifyLaunchError(code string) LaunchErrorClass {
	switch {
	case IsInsufficientCapacityCode(code):
		return LaunchErrorCapacity
	case LaunchErrorCode(code) == CodeServiceLinkedRoleCreationNotPermitted:
		return LaunchErrorSpotOnly
	}
	return LaunchErrorRefused
}

// maxReasonLength is a condition reason's limit (metav1.Condition).
const maxReasonLength = 1024

// ConditionReason is a cloud error code as a condition reason: CamelCase,
// the code's letters and digits with each part after a separator
// capitalised ("AuthFailure.ServiceLinkedRoleCreationNotPermitted" →
// "AuthFailureServiceLinkedRoleCreationNotPermitted"), prefixed "Code"
// when it would not start with a letter, "LaunchFailed" for no code.
func ConditionReason(code string) string {
	var b strings.Builder
	upper := true
	for _, r := range code {
		if r > unicode.MaxASCII || !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			upper = true
			continue
		}
		if upper {
			r = unicode.ToUpper(r)
			upper = false
		}
		b.WriteRune(r)
	}
	out := b.String()
	switch {
	case out == "":
		return "LaunchFailed"
	case !unicode.IsLetter(rune(out[0])):
		out = "Code" + out
	}
	if len(out) > maxReasonLength {
		out = out[:maxReasonLength]
	}
	return out
}

// OfferingError is one offering a launch tried and the cloud's error for
// it.
type OfferingError struct {
	Offering OfferingKey
	Code     string
	// Message is the cloud's, when it gave one.
	Message string
}

// NewLaunchError is the error of a launch that launched nothing, from the
// error of each offering it tried, in order; cause (which may be nil)
// says which launch it was. Every capacity and spot-only error is kept as
// a mark to make whatever else failed. When every error is one of those
// it returns an *InsufficientCapacityError; otherwise a *CreateError with
// the first refusal's code, every refusal in its message, and the marks
// in Unavailable.
func NewLaunchError(errs []OfferingError, cause error) error {
	ice := NewInsufficientCapacityError(cause)
	var refused []OfferingError
	for _, e := range errs {
		if ClassifyLaunchError(e.Code) == LaunchErrorRefused {
			refused = append(refused, e)
			continue
		}
		ice.Add(e.Offering, e.Code)
	}
	if len(refused) == 0 {
		return ice
	}
	// One line per distinct refusal: a whole-account refusal repeats for
	// every offering.
	var msgs []string
	seen := map[string]bool{}
	for _, e := range refused {
		msg := e.Code
		if e.Message != "" {
			msg += ": " + e.Message
		}
		if !seen[msg] {
			seen[msg] = true
			msgs = append(msgs, fmt.Sprintf("%s (%s)", msg, e.Offering))
		}
	}
	err := errors.New(strings.Join(msgs, "; "))
	if cause != nil {
		err = fmt.Errorf("%w, %w", cause, err)
	}
	ce := NewCloudCreateError(refused[0].Code, err)
	if len(ice.Offerings) > 0 {
		ice.Err = nil
		ce.Unavailable = ice
	}
	return ce
}

// LaunchErrorCodesOf are the cloud error codes in a launch's error: an
// insufficient-capacity error's, or a refusal's and the codes of what it
// found unavailable.
func LaunchErrorCodesOf(err error) []string {
	var out []string
	if ce, ok := AsCreateError(err); ok && ce.Code != "" && !IsInsufficientCapacityError(err) {
		out = append(out, ce.Code)
	}
	if ice := UnavailableIn(err); ice != nil {
		for _, code := range ice.Codes() {
			if !slices.Contains(out, code) {
				out = append(out, code)
			}
		}
	}
	return out
}
