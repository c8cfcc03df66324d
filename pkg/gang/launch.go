package gang

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// LaunchFailure says how a NodeClaim launched for a gang fails its
// launch at once, "" while it does not: it is being deleted (a launch
// found no capacity, or someone deleted it) or its launch was refused
// (Launched=False). The release (lifecycle.ReleaseGroups) lets the
// launch go for it, and until then no pod is planned onto the launch's
// other NodeClaims (state.Build).
func LaunchFailure(nc *v1.NodeClaim) string {
	if nc.DeletionTimestamp != nil {
		return fmt.Sprintf("NodeClaim %s was deleted", nc.Name)
	}
	if c := meta.FindStatusCondition(nc.Status.Conditions, v1.ConditionTypeLaunched); c != nil && c.Status == metav1.ConditionFalse {
		return fmt.Sprintf("NodeClaim %s failed to launch (%s: %s)", nc.Name, c.Reason, c.Message)
	}
	return ""
}

// FailedLaunches are the names of the gangs' launches, among claims, not
// complete and with a NodeClaim whose launch failed (LaunchFailure).
func FailedLaunches(claims []*v1.NodeClaim) map[string]bool {
	out := map[string]bool{}
	for _, nc := range claims {
		launch := nc.Annotations[AtomicGroupLaunchAnnotationKey]
		if launch != "" && nc.Annotations[AtomicGroupLaunchedAnnotationKey] == "" && LaunchFailure(nc) != "" {
			out[launch] = true
		}
	}
	return out
}
