package lifecycle

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/effects"
	"github.com/capstan-dev/capstan/pkg/gang"
	"github.com/capstan-dev/capstan/pkg/state"
)

// DefaultAtomicGroupLaunchTimeout is how long a gang's launch may take to
// have every NodeClaim Launched before what it launched is released: the
// time kube-scheduler's GangScheduling plugin holds a gang's pods waiting
// for the rest (permitTimeoutDuration in kubernetes
// pkg/scheduler/framework/plugins/gangscheduling). The controller's
// --atomic-group-launch-timeout and `capstan simulate` default to it.
const DefaultAtomicGroupLaunchTimeout = 5 * time.Minute

// atomicGroupSettle is how long after a launch's first NodeClaim was
// created a NodeClaim of it missing altogether counts as lost: the
// provisioner creates a launch's NodeClaims in one pass, and a cache may
// show some before the others.
const atomicGroupSettle = 10 * time.Second

// DeletedAtomicGroupReleased: another NodeClaim of its gang's launch
// failed, so the whole launch was let go (simulate's deletionReason).
const DeletedAtomicGroupReleased = "AtomicGroupReleased"

// ReleaseGroups is the release of gangs' launches: for each launch (the
// NodeClaims sharing capstan.dev/atomic-group-launch) not yet complete,
// if one of its NodeClaims is being deleted, failed to launch
// (Launched=False), is missing, or they are not all Launched within
// timeout of the first one's creation, every NodeClaim of the launch
// whose node runs no pod (running: node names, see NodesRunningPods) is
// deleted with an AtomicGroupReleased event, and the pods are planned
// again at once (the capacity marked unavailable by the failure steers
// that plan elsewhere). A launch whose NodeClaims are all Launched is
// marked complete (capstan.dev/atomic-group-launched) and left alone from
// then on; one still under way asks to be run again when it could time
// out. It is pure.
func ReleaseGroups(claims []*v1.NodeClaim, running map[string]bool, now time.Time, timeout time.Duration) []effects.Effect {
	launches := map[string][]*v1.NodeClaim{}
	for _, nc := range claims {
		if name := nc.Annotations[gang.AtomicGroupLaunchAnnotationKey]; name != "" {
			launches[name] = append(launches[name], nc)
		}
	}
	var out []effects.Effect
	released := false
	for _, name := range slices.Sorted(maps.Keys(launches)) {
		effs, release := releaseLaunch(name, launches[name], running, now, timeout)
		out = append(out, effs...)
		released = released || release
	}
	if released {
		out = append(out, effects.TriggerSolve{Immediate: true})
	}
	return out
}

// releaseLaunch is ReleaseGroups for one launch; release reports whether
// it deleted anything.
func releaseLaunch(name string, claims []*v1.NodeClaim, running map[string]bool, now time.Time, timeout time.Duration) ([]effects.Effect, bool) {
	if slices.ContainsFunc(claims, func(nc *v1.NodeClaim) bool { return nc.Annotations[gang.AtomicGroupLaunchedAnnotationKey] != "" }) {
		return nil, false
	}
	slices.SortFunc(claims, func(a, b *v1.NodeClaim) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	first := claims[0]
	key := first.Annotations[gang.AtomicGroupAnnotationKey]
	size, err := strconv.Atoi(first.Annotations[gang.AtomicGroupSizeAnnotationKey])
	if err != nil || size < 1 {
		size = len(claims)
	}
	why, wake := failed(claims, size, now, timeout)
	if why == "" {
		if launched := countLaunched(claims); launched == size && len(claims) == size {
			var out []effects.Effect
			for _, nc := range claims {
				out = append(out, effects.MergeMetadata{Object: effects.NodeClaimRef(nc.Name), Annotations: map[string]string{gang.AtomicGroupLaunchedAnnotationKey: now.UTC().Format(time.RFC3339)}})
			}
			return out, false
		}
		return []effects.Effect{effects.RequeueAt{At: wake}}, false
	}
	var out []effects.Effect
	msg := fmt.Sprintf("gang %s: %s; the NodeClaims of launch %s that run no pod are released", key, why, name)
	for _, nc := range claims {
		if nc.DeletionTimestamp != nil || nc.Status.NodeName != "" && running[nc.Status.NodeName] {
			continue
		}
		out = append(out,
			event(nc, corev1.EventTypeWarning, DeletedAtomicGroupReleased, "Delete", truncate(msg)),
			effects.DeleteNodeClaim{Name: nc.Name, Reason: DeletedAtomicGroupReleased})
	}
	return out, len(out) > 0
}

// failed says why the launch failed, "" while it has not; wake is when
// it would next fail for want of time.
func failed(claims []*v1.NodeClaim, size int, now time.Time, timeout time.Duration) (string, time.Time) {
	for _, nc := range claims {
		if why := gang.LaunchFailure(nc); why != "" {
			return why, time.Time{}
		}
	}
	created := claims[0].CreationTimestamp.Time
	settled, deadline := created.Add(atomicGroupSettle), created.Add(timeout)
	if len(claims) < size && !now.Before(settled) {
		return fmt.Sprintf("%d of its %d NodeClaims are gone", size-len(claims), size), time.Time{}
	}
	if !now.Before(deadline) {
		return fmt.Sprintf("%d of its %d NodeClaims launched within %s", countLaunched(claims), size, timeout), time.Time{}
	}
	if len(claims) < size {
		return "", settled
	}
	return "", deadline
}

func countLaunched(claims []*v1.NodeClaim) int {
	n := 0
	for _, nc := range claims {
		if meta.IsStatusConditionTrue(nc.Status.Conditions, v1.ConditionTypeLaunched) {
			n++
		}
	}
	return n
}

// NodesRunningPods are the nodes a pod that is no DaemonSet's and not
// finished is bound to: a gang's NodeClaim on one of them is kept.
func NodesRunningPods(pods []*corev1.Pod) map[string]bool {
	out := map[string]bool{}
	for _, p := range pods {
		if p.Spec.NodeName != "" && !state.IsDaemonSetPod(p) && !state.IsTerminal(p) {
			out[p.Spec.NodeName] = true
		}
	}
	return out
}
