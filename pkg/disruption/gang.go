package disruption

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/capstan-dev/capstan/pkg/gang"
)

// gangNodes are, for each gang among the pods that must move with their
// node (mustMove), the nodes its members run on. Gangs are read as the
// solver reads them (gang.KeyOf, declared by their PodGroups).
func gangNodes(pods []*corev1.Pod, declared gang.Declared) map[string]sets.Set[string] {
	out := map[string]sets.Set[string]{}
	for _, p := range pods {
		key := gang.KeyOf(p)
		if !mustMove(p) || !gang.IsGang(key, declared) {
			continue
		}
		if out[key] == nil {
			out[key] = sets.New[string]()
		}
		out[key].Insert(p.Spec.NodeName)
	}
	return out
}

// gangHold is why voluntary disruption leaves c alone for a gang: a pod
// of it belongs to a gang that runs on other nodes too. A gang is moved
// only as a whole: moving some members restarts them apart from the
// rest, which an all-or-nothing workload cannot run with; a node holding
// a whole gang moves like any other (docs/batch.md, "Gangs").
func gangHold(c Candidate, nodes map[string]sets.Set[string]) string {
	for _, p := range c.Pods {
		on := nodes[gang.KeyOf(p)]
		if on.Len() > 1 {
			return fmt.Sprintf("pod %s/%s belongs to gang %s, which runs on %d nodes; a gang is moved only as a whole", p.Namespace, p.Name, gang.KeyOf(p), on.Len())
		}
	}
	return ""
}
