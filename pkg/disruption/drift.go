package disruption

import (
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/scheduling"
)

// Drift reasons, as the Drifted condition reports them.
const (
	// DriftNodePool: the NodePool's static fields (spec.template but its
	// requirements) changed since the NodeClaim was created (decision 13).
	DriftNodePool = "NodePoolDrifted"
	// DriftRequirements: the NodeClaim's labels no longer satisfy the
	// NodePool's requirements.
	DriftRequirements = "RequirementsDrifted"
)

// Drifted says why nc no longer matches np, "" if it still does:
//   - its NodePool hash differs from np's, written with the same hash
//     version (a NodeClaim stamped by another version is not judged: its
//     hash is re-stamped, not replaced);
//   - its labels fail a requirement of np. Widening a requirement so the
//     node still matches (adding m5.large to an In list the node's type is
//     already in) is not drift, and a well-known label the NodeClaim does
//     not carry is the cloud's to set, not a mismatch.
//
// Behavioural fields (weight, limits, disruption) are never drift: the hash
// leaves them out. What the cloud provider reports (IsDrifted) is the
// caller's third source.
func Drifted(nc *v1.NodeClaim, np *v1.NodePool) string {
	if nc.Annotations[v1.NodePoolHashVersionAnnotationKey] == v1.NodePoolHashVersion {
		if hash, ok := nc.Annotations[v1.NodePoolHashAnnotationKey]; ok && hash != np.Hash() {
			return DriftNodePool
		}
	}
	reqs := scheduling.NewNodeSelectorRequirementsWithMinValues(np.Spec.Template.Spec.Requirements...)
	for key, r := range reqs {
		if _, ok := nc.Labels[key]; !ok && scheduling.IsWellKnown(key) {
			continue
		}
		if err := (scheduling.Requirements{key: r}).Matches(nc.Labels); err != nil {
			return DriftRequirements
		}
	}
	return ""
}
