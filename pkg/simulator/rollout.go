package simulator

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// Strategies a workload replaces its pods of an earlier template by.
const (
	// rollingUpdate is a Deployment's: new pods up to maxSurge above the
	// replicas, old ones removed while maxUnavailable allows.
	rollingUpdate = "RollingUpdate"
	// recreate is a Deployment's Recreate: every old pod goes first.
	recreate = "Recreate"
	// ordered is a StatefulSet's RollingUpdate: the highest ordinal first,
	// one at a time, each once every pod runs.
	ordered = "Ordered"
)

// rollout is a workload replacing the pods of an earlier template, as
// its controller does after an update.
type rollout struct {
	strategy                 string
	maxSurge, maxUnavailable intstr.IntOrString
	// partition: a StatefulSet's pods below this ordinal keep their
	// template.
	partition int
	// stale are the pods (keys) of earlier templates still to replace.
	stale map[string]bool
}

// rolloutOf is how the object's controller rolls out a new template;
// nil when it leaves running pods alone (a StatefulSet's OnDelete).
// Defaults are the API server's: RollingUpdate, 25% surge and 25%
// unavailable.
func rolloutOf(obj any) *rollout {
	switch o := obj.(type) {
	case *appsv1.Deployment:
		if o.Spec.Strategy.Type == appsv1.RecreateDeploymentStrategyType {
			return &rollout{strategy: recreate}
		}
		r := &rollout{strategy: rollingUpdate, maxSurge: intstr.FromString("25%"), maxUnavailable: intstr.FromString("25%")}
		if ru := o.Spec.Strategy.RollingUpdate; ru != nil {
			r.maxSurge = ptr.Deref(ru.MaxSurge, r.maxSurge)
			r.maxUnavailable = ptr.Deref(ru.MaxUnavailable, r.maxUnavailable)
		}
		return r
	case *appsv1.StatefulSet:
		if o.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType {
			return nil
		}
		r := &rollout{strategy: ordered}
		if ru := o.Spec.UpdateStrategy.RollingUpdate; ru != nil {
			r.partition = int(ptr.Deref(ru.Partition, 0))
		}
		return r
	}
	return nil
}

// update takes a new version of the workload's object, as its controller
// would: the replicas at once; a new template for new pods, and, by the
// strategy, for the running ones too (a ReplicaSet's or Job's stay as
// they are). It describes the change for the event.
func (w *workload) update(world *world, next *workload, strategy *rollout) string {
	var notes []string
	if w.replicas != next.replicas {
		notes = append(notes, fmt.Sprintf("replicas %d → %d", w.replicas, next.replicas))
		w.replicas = next.replicas
	}
	if apiequality.Semantic.DeepEqual(w.template, next.template) {
		return strings.Join(notes, "; ")
	}
	w.template, w.claims = next.template, next.claims
	if w.hash != "" {
		// A new template is a new ReplicaSet, named by the template's hash.
		data, _ := json.Marshal(w.template)
		w.hash = fmt.Sprintf("%08x", hashOf(w.target()+"/"+string(data)))
		w.owner.Name = w.name + "-" + w.hash
	}
	if strategy == nil {
		return strings.Join(append(notes, "new pods get the new template"), "; ")
	}
	stale := map[string]bool{}
	if w.rollout != nil {
		stale = w.rollout.stale
	}
	for key := range w.pods {
		if p, ok := world.pods[key]; ok && (strategy.strategy != ordered || ordinal(w, p) >= strategy.partition) {
			stale[key] = true
		}
	}
	strategy.stale = stale
	w.rollout = strategy
	return strings.Join(append(notes, fmt.Sprintf("%d pod(s) roll to the new template (%s)", len(stale), strategy.strategy)), "; ")
}

// roll is reconcile during a rollout. It reports done when it handled
// everything (a Deployment's rolling update); otherwise reconcile goes on
// to keep the replicas, creating old pods' replacements from the new
// template.
func (w *workload) roll(world *world, rng *rand.Rand) (created, deleted int, done bool) {
	r := w.rollout
	var old, current []*corev1.Pod
	for key := range w.pods {
		p, ok := world.pods[key]
		switch {
		case !ok:
			delete(w.pods, key)
			delete(r.stale, key)
		case r.stale[key]:
			old = append(old, p)
		default:
			current = append(current, p)
		}
	}
	// Map order is random; creation order keeps a run deterministic.
	old, current = world.inCreationOrder(old), world.inCreationOrder(current)
	if len(old) == 0 {
		w.rollout = nil
		return 0, 0, false
	}
	remove := func(p *corev1.Pod) {
		world.deletePod(p)
		delete(w.pods, podKey(p))
		delete(r.stale, podKey(p))
		deleted++
	}
	switch r.strategy {
	case recreate:
		for _, p := range old {
			remove(p)
		}
		return 0, deleted, false
	case ordered:
		// The highest ordinal first, once every pod runs: each
		// replacement must be up before the next pod goes.
		if len(old)+len(current) < int(w.replicas) || slices.ContainsFunc(old, unbound) || slices.ContainsFunc(current, unbound) {
			return 0, 0, false
		}
		remove(slices.MaxFunc(old, func(a, b *corev1.Pod) int { return ordinal(w, a) - ordinal(w, b) }))
		return 0, deleted, false
	}
	created = w.rollingUpdate(world, rng, old, current, remove)
	return created, deleted, true
}

// rollingUpdate is one step of the deployment controller's rolling
// update: the new ReplicaSet scaled up within maxSurge, then the old
// ones down while maxUnavailable allows, pods not running first. It
// returns how many pods it created; remove counts the deleted.
func (w *workload) rollingUpdate(world *world, rng *rand.Rand, old, current []*corev1.Pod, remove func(*corev1.Pod)) (created int) {
	r := w.rollout
	replicas := int(w.replicas)
	surge, _ := intstr.GetScaledValueFromIntOrPercent(&r.maxSurge, replicas, true)
	unavailable, _ := intstr.GetScaledValueFromIntOrPercent(&r.maxUnavailable, replicas, false)
	if surge == 0 && unavailable == 0 {
		unavailable = 1
	}
	unavailable = min(unavailable, replicas)
	for len(current) > replicas {
		remove(current[len(current)-1])
		current = current[:len(current)-1]
	}
	for len(current) < replicas && len(current)+len(old) < replicas+surge {
		p := w.newPod(world, rng)
		world.addPod(p)
		w.pods[podKey(p)] = true
		current = append(current, p)
		created++
	}
	minAvailable := replicas - unavailable
	newUnavailable := countFunc(current, unbound)
	if len(old)+len(current)-minAvailable-newUnavailable <= 0 {
		return created
	}
	// Pods not running go first, as the ReplicaSet controller ranks
	// them, up to the surplus; they leave availability as it is. Then
	// running ones, newest first, while enough stay available.
	cleanup := len(old) + len(current) - minAvailable - newUnavailable
	available := len(old) - countFunc(old, unbound) + len(current) - newUnavailable
	slices.Reverse(old)
	slices.SortStableFunc(old, func(a, b *corev1.Pod) int { return boolRank(unbound(b)) - boolRank(unbound(a)) })
	left := 0
	for _, p := range old {
		switch {
		case unbound(p) && cleanup > 0:
			remove(p)
			cleanup--
		case !unbound(p) && available > minAvailable:
			remove(p)
			available--
		default:
			left++
		}
	}
	if left == 0 {
		w.rollout = nil
	}
	return created
}

func unbound(p *corev1.Pod) bool { return p.Spec.NodeName == "" }

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

func countFunc[T any](list []T, f func(T) bool) int {
	n := 0
	for _, x := range list {
		if f(x) {
			n++
		}
	}
	return n
}

// ordinal is a StatefulSet pod's ordinal, from its name.
func ordinal(w *workload, p *corev1.Pod) int {
	n, err := strconv.Atoi(strings.TrimPrefix(p.Name, w.name+"-"))
	if err != nil {
		return -1
	}
	return n
}
