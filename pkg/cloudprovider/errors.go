package cloudprovider

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// CapacityErrorCode is a cloud error code that means "no capacity for this
// offering right now": the launch may succeed with another offering.
type CapacityErrorCode string

// The AWS insufficient-capacity class codes (compat.md, "Constants worth
// matching"). Other providers map their codes onto these where they mean
// the same.
const (
	CodeInsufficientInstanceCapacity      CapacityErrorCode = "InsufficientInstanceCapacity"
	CodeMaxSpotInstanceCountExceeded      CapacityErrorCode = "MaxSpotInstanceCountExceeded"
	CodeVcpuLimitExceeded                 CapacityErrorCode = "VcpuLimitExceeded"
	CodeUnfulfillableCapacity             CapacityErrorCode = "UnfulfillableCapacity"
	CodeUnsupported                       CapacityErrorCode = "Unsupported"
	CodeInsufficientFreeAddressesInSubnet CapacityErrorCode = "InsufficientFreeAddressesInSubnet"
	CodeMaxFleetCountExceeded             CapacityErrorCode = "MaxFleetCountExceeded"
	CodeReservationCapacityExceeded       CapacityErrorCode = "ReservationCapacityExceeded"
	// CodeSpotMaxPriceTooLow behaves like the others for a spot launch
	// with a max price (seed 003): the offering is too dear now, try
	// another.
	CodeSpotMaxPriceTooLow CapacityErrorCode = "SpotMaxPriceTooLow"
)

// CapacityErrorCodes returns every insufficient-capacity class code.
func CapacityErrorCodes() []CapacityErrorCode {
	return []CapacityErrorCode{
		CodeInsufficientInstanceCapacity, CodeMaxSpotInstanceCountExceeded, CodeVcpuLimitExceeded,
		CodeUnfulfillableCapacity, CodeUnsupported, CodeInsufficientFreeAddressesInSubnet,
		CodeMaxFleetCountExceeded, CodeReservationCapacityExceeded, CodeSpotMaxPriceTooLow,
	}
}

// IsInsufficientCapacityCode reports whether a cloud error code belongs to
// the insufficient-capacity class (SpotMaxPriceTooLow included), i.e. the
// offering should be marked unavailable and another tried.
func IsInsufficientCapacityCode(code string) bool {
	switch CapacityErrorCode(code) {
	case CodeInsufficientInstanceCapacity, CodeMaxSpotInstanceCountExceeded, CodeVcpuLimitExceeded,
		CodeUnfulfillableCapacity, CodeUnsupported, CodeInsufficientFreeAddressesInSubnet,
		CodeMaxFleetCountExceeded, CodeReservationCapacityExceeded, CodeSpotMaxPriceTooLow:
		return true
	}
	return false
}

// InsufficientCapacityError reports that no tried offering had capacity.
// It names every failed offering so the caller marks them all unavailable
// at once and the next simulation falls back immediately.
type InsufficientCapacityError struct {
	// Offerings are the failed offerings, in the order tried, without
	// duplicates.
	Offerings []OfferingKey
	// Reasons holds each failed offering's cloud error code (e.g.
	// CodeInsufficientInstanceCapacity); an offering may lack one.
	Reasons map[OfferingKey]string
	// CapacityTypeWide are capacity types unavailable account-wide (spot
	// on CodeMaxSpotInstanceCountExceeded): every offering of them should be
	// marked, not only those tried.
	CapacityTypeWide []string
	// Err is the underlying cloud error, if any.
	Err error
}

// NewInsufficientCapacityError returns an empty error wrapping cause (which
// may be nil); Add the failed offerings to it.
func NewInsufficientCapacityError(cause error) *InsufficientCapacityError {
	return &InsufficientCapacityError{Reasons: map[OfferingKey]string{}, Err: cause}
}

// Add records a failed offering and its cloud error code ("" for none);
// adding an offering again replaces its reason.
// CodeMaxSpotInstanceCountExceeded on a spot offering also marks spot
// capacity-type wide, since the limit is the account's, not the pool's.
func (e *InsufficientCapacityError) Add(key OfferingKey, reason string) {
	if e.Reasons == nil {
		e.Reasons = map[OfferingKey]string{}
	}
	if !slices.Contains(e.Offerings, key) {
		e.Offerings = append(e.Offerings, key)
	}
	if reason == "" {
		delete(e.Reasons, key)
	} else {
		e.Reasons[key] = reason
	}
	if marksCapacityTypeWide(key, reason) {
		e.AddCapacityTypeWide(key.CapacityType)
	}
}

// marksCapacityTypeWide reports whether code on offering key makes the
// offering's whole capacity type unavailable account-wide: spot's instance
// count limit and the spot-only codes (the service-linked role) are the
// account's, not the pool's.
func marksCapacityTypeWide(key OfferingKey, code string) bool {
	return key.CapacityType == v1.CapacityTypeSpot &&
		(code == string(CodeMaxSpotInstanceCountExceeded) || ClassifyLaunchError(code) == LaunchErrorSpotOnly)
}

// Reason is why offering key failed: its cloud error code, or
// "InsufficientCapacity" when it has none.
func (e *InsufficientCapacityError) Reason(key OfferingKey) string {
	if code := e.Reasons[key]; code != "" {
		return code
	}
	return "InsufficientCapacity"
}

// wideReason is why capacityType is unavailable account-wide: the code of
// the first offering of it whose code marks the whole capacity type.
func (e *InsufficientCapacityError) wideReason(capacityType string) string {
	for _, key := range e.Offerings {
		if code := e.Reasons[key]; key.CapacityType == capacityType && marksCapacityTypeWide(key, code) {
			return code
		}
	}
	return "InsufficientCapacity"
}

// Codes are the distinct cloud error codes of the failed offerings, in
// the order first seen.
func (e *InsufficientCapacityError) Codes() []string {
	var out []string
	for _, key := range e.Offerings {
		if code := e.Reasons[key]; code != "" && !slices.Contains(out, code) {
			out = append(out, code)
		}
	}
	return out
}

// AddCapacityTypeWide records that capacityType is unavailable account-wide.
func (e *InsufficientCapacityError) AddCapacityTypeWide(capacityType string) {
	if !slices.Contains(e.CapacityTypeWide, capacityType) {
		e.CapacityTypeWide = append(e.CapacityTypeWide, capacityType)
	}
}

// Error names every failed offering with its reason.
func (e *InsufficientCapacityError) Error() string {
	var b strings.Builder
	if len(e.Offerings) == 0 {
		b.WriteString("insufficient capacity, no compatible offering")
	} else {
		fmt.Fprintf(&b, "insufficient capacity in %d offering(s): ", len(e.Offerings))
		for i, key := range e.Offerings {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(key.String())
			if reason := e.Reasons[key]; reason != "" {
				fmt.Fprintf(&b, " (%s)", reason)
			}
		}
	}
	if len(e.CapacityTypeWide) > 0 {
		fmt.Fprintf(&b, "; unavailable account-wide: %s", strings.Join(e.CapacityTypeWide, ", "))
	}
	if e.Err != nil {
		fmt.Fprintf(&b, ", %s", e.Err)
	}
	return b.String()
}

// Unwrap returns the underlying cloud error.
func (e *InsufficientCapacityError) Unwrap() error { return e.Err }

// IsInsufficientCapacityError reports whether err's tree holds an
// *InsufficientCapacityError.
func IsInsufficientCapacityError(err error) bool {
	_, ok := errors.AsType[*InsufficientCapacityError](err)
	return ok
}

// AsInsufficientCapacityError returns the first *InsufficientCapacityError
// in err's tree.
func AsInsufficientCapacityError(err error) (*InsufficientCapacityError, bool) {
	return errors.AsType[*InsufficientCapacityError](err)
}

// UnavailableIn is what a launch's error found without capacity: its
// *InsufficientCapacityError, or the one a refusal (*CreateError) carries
// in Unavailable; nil when err names no unavailable offering.
func UnavailableIn(err error) *InsufficientCapacityError {
	if ice, ok := AsInsufficientCapacityError(err); ok {
		return ice
	}
	if ce, ok := AsCreateError(err); ok {
		return ce.Unavailable
	}
	return nil
}

// IgnoreInsufficientCapacityError returns nil for an insufficient-capacity
// error and err otherwise.
func IgnoreInsufficientCapacityError(err error) error {
	if IsInsufficientCapacityError(err) {
		return nil
	}
	return err
}

// NodeClaimNotFoundError reports that an instance is gone (or never
// existed). Delete returns it once termination is complete.
type NodeClaimNotFoundError struct {
	ProviderID string
	Err        error
}

// NewNodeClaimNotFoundError returns a not-found error for providerID
// wrapping cause (which may be nil).
func NewNodeClaimNotFoundError(providerID string, cause error) *NodeClaimNotFoundError {
	return &NodeClaimNotFoundError{ProviderID: providerID, Err: cause}
}

// Error names the instance.
func (e *NodeClaimNotFoundError) Error() string {
	msg := fmt.Sprintf("instance %q not found", e.ProviderID)
	if e.Err != nil {
		msg += ", " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the underlying cloud error.
func (e *NodeClaimNotFoundError) Unwrap() error { return e.Err }

// IsNodeClaimNotFoundError reports whether err's tree holds a
// *NodeClaimNotFoundError.
func IsNodeClaimNotFoundError(err error) bool {
	_, ok := errors.AsType[*NodeClaimNotFoundError](err)
	return ok
}

// IgnoreNodeClaimNotFound returns nil for a not-found error and err
// otherwise, which makes Delete idempotent for callers.
func IgnoreNodeClaimNotFound(err error) error {
	if IsNodeClaimNotFoundError(err) {
		return nil
	}
	return err
}

// NodeClassNotReadyError reports that a NodeClass is missing or not ready,
// so nothing can be launched with it yet; callers retry later rather than
// mark offerings unavailable.
type NodeClassNotReadyError struct {
	Name string
	Err  error
}

// NewNodeClassNotReadyError returns a not-ready error for the NodeClass
// name wrapping cause (which may be nil).
func NewNodeClassNotReadyError(name string, cause error) *NodeClassNotReadyError {
	return &NodeClassNotReadyError{Name: name, Err: cause}
}

// Error names the NodeClass.
func (e *NodeClassNotReadyError) Error() string {
	msg := fmt.Sprintf("nodeclass %q not ready", e.Name)
	if e.Err != nil {
		msg += ", " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the cause.
func (e *NodeClassNotReadyError) Unwrap() error { return e.Err }

// IsNodeClassNotReadyError reports whether err's tree holds a
// *NodeClassNotReadyError.
func IsNodeClassNotReadyError(err error) bool {
	_, ok := errors.AsType[*NodeClassNotReadyError](err)
	return ok
}

// IgnoreNodeClassNotReady returns nil for a not-ready error and err
// otherwise.
func IgnoreNodeClassNotReady(err error) error {
	if IsNodeClassNotReadyError(err) {
		return nil
	}
	return err
}

// CreateError is a launch failure other than insufficient capacity. Reason
// is a CamelCase condition reason (e.g. "LaunchTemplateNotFound") the
// lifecycle controller puts on the NodeClaim's Launched condition; the
// message is Err's.
type CreateError struct {
	Reason string
	// Code is the cloud's error code when the cloud refused the launch
	// (Reason is then derived from it), empty for Capstan's own failures.
	Code string
	Err  error
	// Unavailable holds the offerings the same launch found without
	// capacity (and the capacity types it found unavailable account-wide):
	// they are marked unavailable although the launch failed for another
	// reason, so the retry tries the others. Nil when there were none. It
	// is not in Unwrap's chain: the error is not an insufficient-capacity
	// one.
	Unavailable *InsufficientCapacityError
}

// NewCreateError returns a launch failure with a condition reason.
func NewCreateError(reason string, cause error) *CreateError {
	return &CreateError{Reason: reason, Err: cause}
}

// NewCloudCreateError returns a launch the cloud refused with code: its
// reason is ConditionReason(code).
func NewCloudCreateError(code string, cause error) *CreateError {
	return &CreateError{Reason: ConditionReason(code), Code: code, Err: cause}
}

// Error carries the reason and the cause.
func (e *CreateError) Error() string {
	msg := "creating instance (" + e.Reason + ")"
	if e.Err != nil {
		msg += ", " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the cause.
func (e *CreateError) Unwrap() error { return e.Err }

// IsCreateError reports whether err's tree holds a *CreateError.
func IsCreateError(err error) bool {
	_, ok := errors.AsType[*CreateError](err)
	return ok
}

// AsCreateError returns the first *CreateError in err's tree, for its
// Reason.
func AsCreateError(err error) (*CreateError, bool) {
	return errors.AsType[*CreateError](err)
}

// CheckNodeClassRef returns a *NodeClassNotReadyError when ref is unset or
// names a NodeClass kind the provider does not serve (GetSupportedNodeClasses):
// a NodePool pointing at another provider's NodeClass must not be launched
// from, even if a NodeClass of the same name exists here.
func CheckNodeClassRef(cp CloudProvider, ref *v1.NodeClassReference) error {
	if ref == nil {
		return NewNodeClassNotReadyError("", errors.New("spec.template.spec.nodeClassRef is not set"))
	}
	var served []string
	for _, gvk := range cp.GetSupportedNodeClasses() {
		if gvk.Group == ref.Group && gvk.Kind == ref.Kind {
			return nil
		}
		served = append(served, gvk.Kind+"."+gvk.Group)
	}
	return NewNodeClassNotReadyError(ref.Name, fmt.Errorf("kind %s.%s is not served by cloud provider %s (it serves %s)",
		ref.Kind, ref.Group, cp.Name(), strings.Join(served, ", ")))
}
