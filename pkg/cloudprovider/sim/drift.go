package sim

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
)

// Drift reasons the simulated cloud reports (IsDrifted). Each is a valid
// Kubernetes condition reason: it becomes the reason of the NodeClaim's
// Drifted condition.
const (
	// DriftNodeClass: the SimNodeClass's static fields, what an instance
	// is launched with (spec.tags and spec.evictionPolicy), changed since
	// the instance launched: the hash recorded with the instance at launch
	// (NodeClassHash) differs from the SimNodeClass's now. Instances
	// launched before the cloud recorded hashes, or under another
	// NodeClassHashVersion, are never judged by this rule. The reference's
	// counterpart is EC2NodeClass static drift (its hash annotation).
	DriftNodeClass cloudprovider.DriftReason = "NodeClassDrifted"
	// DriftReservationDeselected: the instance runs in a capacity
	// reservation its SimNodeClass's capacityReservationSelectorTerms no
	// longer select.
	DriftReservationDeselected cloudprovider.DriftReason = "CapacityReservationDeselected"
)

// NodeClassHashAnnotationKey is the annotation on the NodeClaims Create,
// Get and List return that shows the hash of the SimNodeClass's static
// fields the instance launched with; NodeClassHashVersionAnnotationKey
// the NodeClassHashVersion it was computed with. The instance's own record
// (Instance.NodeClassHash) is what IsDrifted compares, so the annotations
// are for users: nothing reads them back.
const (
	NodeClassHashAnnotationKey        = simv1alpha1.Group + "/nodeclass-hash"
	NodeClassHashVersionAnnotationKey = simv1alpha1.Group + "/nodeclass-hash-version"
)

// NodeClassHashVersion is recorded with every instance next to its
// NodeClassHash. Bump it whenever NodeClassHash changes what it covers or
// how, so that instances launched before are not mistaken for drifted:
// IsDrifted compares hashes only when the versions match.
const NodeClassHashVersion = "v1"

// nodeClassStatic is what NodeClassHash covers: the SimNodeClass fields an
// instance is launched with. capacityReservationSelectorTerms are judged
// by the reservation rule (DriftReservationDeselected) against what they
// select now, and spotMaxPrice is not drift: a cap below the spot price
// interrupts the instance instead (decision 4).
type nodeClassStatic struct {
	EvictionPolicy simv1alpha1.EvictionPolicy `json:"evictionPolicy"`
	Tags           map[string]string          `json:"tags,omitempty"`
}

// NodeClassHash identifies the static part of a SimNodeClass spec: its
// tags and evictionPolicy, an unset evictionPolicy counting as the
// Deallocate the API server defaults it to (decision 5), so defaulting is
// no change. It is computed as NodePool.Hash is (decision 13), so it is
// stable across processes and runs: the SHA-256 of the fields' JSON
// (whose maps encoding/json writes with sorted keys; no tags and empty
// tags are the same), as 16 lowercase hex characters.
func NodeClassHash(spec simv1alpha1.SimNodeClassSpec) string {
	s := nodeClassStatic{EvictionPolicy: spec.EvictionPolicy, Tags: spec.Tags}
	if s.EvictionPolicy == "" {
		s.EvictionPolicy = simv1alpha1.EvictionPolicyDeallocate
	}
	b, err := json.Marshal(s)
	if err != nil {
		// Unreachable: strings and a map of strings always encode. Hash a
		// value that differs from every real spec rather than panic.
		b = fmt.Appendf(nil, "unencodable simnodeclass spec: %v", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// IsDrifted implements CloudProvider. An instance has drifted when
//   - its SimNodeClass's static fields changed since it launched
//     (DriftNodeClass; instances with no hash recorded under the current
//     NodeClassHashVersion are not judged by this rule), checked first;
//   - it runs in a reservation its SimNodeClass no longer selects
//     (DriftReservationDeselected).
//
// The SimNodeClass is the one the instance launched with (by name). When
// it cannot be read, an instance in a reservation yields the
// NodeClassNotReadyError; any other is not drifted: there is nothing to
// compare its hash with, and the missing NodeClass shows on its NodePools
// as NodeClassReady False.
func (c *Cloud) IsDrifted(ctx context.Context, nc *v1.NodeClaim) (cloudprovider.DriftReason, error) {
	c.mu.Lock()
	release, err := c.beginLocked()
	if err != nil {
		c.mu.Unlock()
		return "", err
	}
	var inst Instance
	if i := c.byProviderIDLocked(nc.Status.ProviderID); i != nil {
		inst = *i
	}
	release()
	c.mu.Unlock()
	hashed := inst.NodeClassHash != "" && inst.NodeClassHashVersion == NodeClassHashVersion
	if inst.ID == "" || (!hashed && inst.ReservationID == "") {
		return "", nil
	}
	nodeClass, err := c.nodeClass(ctx, inst.NodeClass)
	if err != nil {
		if inst.ReservationID == "" {
			return "", nil
		}
		return "", err
	}
	if hashed && inst.NodeClassHash != NodeClassHash(nodeClass.Spec) {
		return DriftNodeClass, nil
	}
	if inst.ReservationID == "" {
		return "", nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if release, err = c.beginLocked(); err != nil {
		return "", err
	}
	defer release()
	status := ResolveNodeClass(nodeClass.Spec, c.reservationsLocked(), c.opts.Clock.Now())
	for _, r := range status.CapacityReservations {
		if r.ID == inst.ReservationID {
			return "", nil
		}
	}
	return DriftReservationDeselected, nil
}
