package v1

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// NodePoolHashVersion is written next to the hash as
// karpenter.sh/nodepool-hash-version. Bump it whenever Hash changes what it
// covers or how, so that a NodeClaim stamped by an older Capstan is not
// mistaken for drifted: drift compares hashes only when the versions match.
const NodePoolHashVersion = "v1"

// Hash identifies the static part of the NodePool's template (decision 13):
// spec.template without spec.template.spec.requirements, which drift checks
// dynamically against node labels. The behavioural fields weight, limits
// and disruption lie outside the template and never count.
//
// The hash covers template labels and annotations, taints, startup taints,
// nodeClassRef, expireAfter and terminationGracePeriod. It is stable across
// processes and runs: it is the SHA-256 of the template's JSON (whose maps
// encoding/json writes with sorted keys), with taints and startup taints
// sorted so that reordering them is no change. The result is 16 lowercase
// hex characters.
func (np *NodePool) Hash() string {
	t := np.Spec.Template.DeepCopy()
	t.Spec.Requirements = nil
	sortTaints(t.Spec.Taints)
	sortTaints(t.Spec.StartupTaints)
	b, err := json.Marshal(t)
	if err != nil {
		// Unreachable: the template holds only strings, maps of strings,
		// taints and durations, none of which can fail to encode. Hash a
		// value that differs from every real template rather than panic.
		b = fmt.Appendf(nil, "unencodable template: %v", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

func sortTaints(taints []corev1.Taint) {
	slices.SortFunc(taints, func(a, b corev1.Taint) int {
		return cmp.Or(
			cmp.Compare(a.Key, b.Key),
			cmp.Compare(a.Effect, b.Effect),
			cmp.Compare(a.Value, b.Value),
		)
	})
}
