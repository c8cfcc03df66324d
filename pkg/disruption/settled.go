package disruption

import (
	"fmt"
	"hash/fnv"
	"io"
	"iter"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/capstan-dev/capstan/pkg/cloudprovider"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// settledKey fingerprints what consolidation's decision depends on: the
// candidates (their pods, blockers, prices, whether they are
// consolidatable now), the pending pods, each NodePool's template,
// policy and the allowance of each reason a settling method (methods)
// disrupts for, and the offerings still available.
// When a pass found nothing to consolidate and the key has not changed,
// the next pass would find nothing either, and its simulations (one
// solve per candidate) are skipped, as the reference skips a cluster it
// has marked consolidated.
func settledKey(in Input, candidates []Candidate, methods []Method, now time.Time) string {
	h := fnv.New64a()
	var allowed []map[string]int
	for _, r := range BudgetReasons(slices.DeleteFunc(slices.Clone(methods), func(m Method) bool { return !consolidates(m) })) {
		allowed = append(allowed, AllowedByPool(in, r, now))
	}
	for _, np := range in.NodePools {
		fmt.Fprintf(h, "np %s %s %s %v %q", np.Name, np.Hash(), np.Spec.Disruption.ConsolidationPolicy, np.Spec.Disruption.ConsolidateAfter,
			np.Annotations[v1.ConsolidationThresholdAnnotationKey])
		for _, a := range allowed {
			fmt.Fprintf(h, " %d", a[np.Name])
		}
		fmt.Fprintln(h)
		available := 0
		for _, it := range in.Snapshot.Input.InstanceTypes[np.Name] {
			for _, o := range it.Offerings {
				if o.IsAvailable() {
					available++
				}
			}
		}
		fmt.Fprintf(h, "offerings %d\n", available)
	}
	for _, c := range candidates {
		fmt.Fprintf(h, "c %s %s %q %v %g %t %d\n", c.NodeClaim.Name, c.Node.Name, c.Blocked, c.Priced, c.Price,
			Consolidatable(c.NodeClaim, c.NodePool, now), len(c.Node.Spec.Taints))
		writePods(h, c.Pods)
	}
	fmt.Fprintln(h, "pending")
	writePods(h, in.Snapshot.Input.Pods)
	return fmt.Sprintf("%x", h.Sum64())
}

// Unsettles is when a round that decided nothing may decide otherwise
// though the cluster did not change: the earliest end, after now, of an
// offering's or a capacity type's unavailable mark, when the offering is
// available again (settledKey counts it, and a return to preferred
// capacity starts waiting it out). Zero when no mark is in force. The
// engine wakes then (Tick.WakeAt), so a caller that plans only when
// something changed (simulate) plans when the controller's poll would.
func Unsettles(h cloudprovider.UnavailableHistory, now time.Time) time.Time {
	var at time.Time
	for _, ends := range []iter.Seq[time.Time]{maps.Values(h.Offerings), maps.Values(h.CapacityTypes)} {
		for t := range ends {
			if t.After(now) && (at.IsZero() || t.Before(at)) {
				at = t
			}
		}
	}
	return at
}

func writePods(w io.Writer, pods []*corev1.Pod) {
	names := make([]string, 0, len(pods))
	for _, p := range pods {
		names = append(names, p.Namespace+"/"+p.Name)
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintln(w, n)
	}
}
