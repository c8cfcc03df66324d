package simulator

import (
	"maps"
	"slices"

	"github.com/capstan-dev/capstan/pkg/gang"
)

// Gang is one all-or-nothing group of pods at the end of a run.
type Gang struct {
	// Key names the gang (gang.KeyOf): "scheduling.k8s.io/PodGroup/NS/NAME"
	// for the Workload API, "scheduling.x-k8s.io/PodGroup/NS/NAME" for
	// scheduler-plugins' label, the capstan.dev/atomic-group value as
	// written.
	Key string `json:"key"`
	// MinCount is how many members must run together; Members how many
	// pods it has, Running how many are on a node.
	MinCount int `json:"minCount"`
	Members  int `json:"members"`
	Running  int `json:"running"`
	// Outcome is "Running" when at least MinCount members run, else
	// "Pending".
	Outcome string `json:"outcome"`
	// PendingReason is a pending member's ("IncompleteGang: ..."), when
	// the gang is pending.
	PendingReason string `json:"pendingReason,omitempty"`
	// Released counts the NodeClaims its failed launches released.
	Released int `json:"released"`
}

// The outcomes of a gang.
const (
	GangRunning = "Running"
	GangPending = "Pending"
)

// gangs are the gangs among the world's pods, reported (pods: the
// report's, for their pending reasons).
func (s *Simulator) gangs(pods []Pod) []Gang {
	declared, _ := gang.Declare(s.world.podGroups)
	reasons := map[string]string{}
	for _, p := range pods {
		reasons[p.Name] = p.PendingReason
	}
	byKey := map[string]*Gang{}
	for _, p := range s.world.sortedPods() {
		key := gang.KeyOf(p)
		if !gang.IsGang(key, declared) {
			continue
		}
		g := byKey[key]
		if g == nil {
			g = &Gang{Key: key, Released: s.gangReleases[key]}
			byKey[key] = g
		}
		g.Members++
		if p.Spec.NodeName != "" {
			g.Running++
		} else if g.PendingReason == "" {
			g.PendingReason = reasons[podKey(p)]
		}
	}
	var out []Gang
	for _, key := range slices.Sorted(maps.Keys(byKey)) {
		g := byKey[key]
		g.MinCount = gang.MinCount(key, declared, g.Members)
		g.Outcome = GangPending
		if g.Running >= g.MinCount {
			g.Outcome, g.PendingReason = GangRunning, ""
		}
		out = append(out, *g)
	}
	return out
}
