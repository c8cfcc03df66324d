package provisioning

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/capstan-dev/capstan/pkg/scheduling"
)

// Reason says why a pod could not be placed. Each is documented for users
// in docs/reasons.md; `capstan explain` and pod events show them.
type Reason string

// Reasons, from the least to the most specific: when NodePools disagree,
// the pod reports the most specific reason any NodePool reached.
const (
	// NoNodePool: there is no NodePool at all.
	ReasonNoNodePool Reason = "NoNodePool"
	// NodeClassNotReady: the NodePools that could take the pod cannot
	// launch: their NodeClass is missing, not ready, or of a kind the
	// cloud provider does not serve.
	ReasonNodeClassNotReady Reason = "NodeClassNotReady"
	// VolumeNotFound: a volume the pod mounts (claim or bound volume) does
	// not exist, so no node can be chosen for it.
	ReasonVolumeNotFound Reason = "VolumeNotFound"
	// InvalidPod: a selector in the pod's affinity or spread is invalid.
	ReasonInvalidPod Reason = "InvalidPod"
	// TopologyUnsatisfiable: pod affinity, anti-affinity or topology spread
	// leave no domain the pod may use.
	ReasonTopologyUnsatisfiable Reason = "TopologyUnsatisfiable"
	// TaintNotTolerated: every NodePool taints its nodes with a taint the
	// pod does not tolerate.
	ReasonTaintNotTolerated Reason = "TaintNotTolerated"
	// IncompatibleRequirements: the pod's node selector or affinity
	// contradicts every NodePool's requirements.
	ReasonIncompatibleRequirements Reason = "IncompatibleRequirements"
	// NoInstanceTypeFits: no instance type the pod's requirements allow
	// has room for it (with the node's daemonsets).
	ReasonNoInstanceTypeFits Reason = "NoInstanceTypeFits"
	// AllOfferingsUnavailable: instance types fit, but every compatible
	// offering is out of capacity for now.
	ReasonAllOfferingsUnavailable Reason = "AllOfferingsUnavailable"
	// MinValuesUnsatisfiable: the instance types left cannot cover a
	// requirement's minValues.
	ReasonMinValuesUnsatisfiable Reason = "MinValuesUnsatisfiable"
	// NodePoolLimitExceeded: a node that fits would exceed the NodePool's
	// limits.
	ReasonNodePoolLimitExceeded Reason = "NodePoolLimitExceeded"
	// ReservationExhausted: the pod may only use capacity reservations and
	// every compatible one is full.
	ReasonReservationExhausted Reason = "ReservationExhausted"
	// NominatedNodeMismatch: the pod was planned onto a NodeClaim whose
	// node registered without fitting it (a label, taint or host port the
	// plan did not expect); Capstan does not launch for it again.
	ReasonNominatedNodeMismatch Reason = "NominatedNodeMismatch"
	// IncompleteGang: the pod belongs to an atomic group (a gang) of
	// which fewer than its min count can be placed, so none is: the
	// message names the group and why a member could not be placed.
	ReasonIncompleteGang Reason = "IncompleteGang"
)

// specificity orders reasons for choosing the one to report.
func (r Reason) specificity() int {
	switch r {
	case ReasonNoNodePool:
		return 0
	case ReasonNodeClassNotReady:
		return 1
	case ReasonInvalidPod, ReasonVolumeNotFound, ReasonNominatedNodeMismatch, ReasonIncompleteGang:
		return 10
	case ReasonTaintNotTolerated:
		return 2
	case ReasonIncompatibleRequirements:
		return 3
	case ReasonTopologyUnsatisfiable:
		return 4
	case ReasonNoInstanceTypeFits:
		return 5
	case ReasonAllOfferingsUnavailable:
		return 6
	case ReasonMinValuesUnsatisfiable:
		return 7
	case ReasonNodePoolLimitExceeded:
		return 8
	case ReasonReservationExhausted:
		return 9
	}
	return -1
}

// describe is why no instance type takes requests, from what filtering
// found.
func describe(f filterResult, requests scheduling.Resources) string {
	switch f.reason {
	case ReasonAllOfferingsUnavailable:
		return "instance types fit, but every offering the pod may use is unavailable"
	case ReasonIncompatibleRequirements:
		return "no instance type matches the pod's requirements (zone, architecture, capacity type, instance labels)"
	}
	if short := requests.Exceeded(f.largest); len(short) > 0 {
		parts := make([]string, len(short))
		for i, name := range short {
			parts[i] = fmt.Sprintf("%s %s (the most any instance type has room for is %s)",
				name, scheduling.FormatAmount(name, requests.Get(name)), scheduling.FormatAmount(name, f.largest.Get(name)))
		}
		return "no instance type has room for " + strings.Join(parts, ", ") + ", after the daemonsets it runs"
	}
	return fmt.Sprintf("no single instance type has room for cpu %s, memory %s and %d pods together, after the daemonsets it runs",
		scheduling.FormatAmount(corev1.ResourceCPU, requests.CPU), scheduling.FormatAmount(corev1.ResourceMemory, requests.Memory), requests.Pods)
}
