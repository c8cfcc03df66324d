package simulator

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/utils/ptr"

	"maps"
	"slices"

	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/scheduling"
	"github.com/capstan-dev/capstan/pkg/state"
)

// daemonSets runs each DaemonSet's pod on every registered node it
// selects and tolerates, bound directly, as the DaemonSet controller does.
// The solver already sized new nodes for them.
func (s *Simulator) daemonSets(context.Context) (bool, error) {
	if len(s.world.daemonSets) == 0 {
		return false, nil
	}
	// A deleted NodeClaim's node is being drained, even before the
	// termination step marks it deleting.
	draining := map[string]bool{}
	for _, nc := range s.world.sortedClaims() {
		if node := s.world.nodeOf(nc); node != nil && nc.DeletionTimestamp != nil {
			draining[node.Name] = true
		}
	}
	changed := false
	for _, node := range s.world.sortedNodes() {
		if node.DeletionTimestamp != nil || draining[node.Name] || hasTaint(node, corev1.TaintNodeNotReady) {
			continue
		}
		running := map[string]bool{}
		for _, p := range s.world.podsOn(node.Name) {
			for _, o := range p.OwnerReferences {
				if o.Kind == "DaemonSet" {
					running[p.Namespace+"/"+o.Name] = true
				}
			}
		}
		for _, ds := range s.world.daemonSets {
			if running[ds.Namespace+"/"+ds.Name] {
				continue
			}
			p := &corev1.Pod{ObjectMeta: *ds.Spec.Template.ObjectMeta.DeepCopy(), Spec: *ds.Spec.Template.Spec.DeepCopy()}
			if !runsOn(p, node) {
				continue
			}
			p.Namespace = ds.Namespace
			p.Name = ds.Name + "-" + suffix(s.rng)
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: ds.Name, Controller: ptr.To(true)}}
			p.Spec.NodeName = node.Name
			s.world.addPod(p)
			changed = true
		}
	}
	return changed, nil
}

// runsOn: the node matches the pod's node selector and affinity and has
// no taint the pod does not tolerate (a DaemonSet's pods tolerate the
// unschedulable taint, and the registering node's taints are gone by now).
func runsOn(p *corev1.Pod, node *corev1.Node) bool {
	if ok, _ := nodeaffinity.GetRequiredNodeAffinity(p).Match(node); !ok {
		return false
	}
	return scheduling.Tolerates(p.Spec.Tolerations, node.Spec.Taints) == nil
}

func hasTaint(node *corev1.Node, key string) bool {
	for _, t := range node.Spec.Taints {
		if t.Key == key {
			return true
		}
	}
	return false
}

// bind stands in for kube-scheduler: pending pods go to registered nodes
// they fit, placed by the same solver with no NodePool to launch from (an
// approximation of kube-scheduler's filters and scores, documented in
// docs/simulate.md). Pods that fit nowhere are marked Unschedulable, which
// is what makes them the provisioner's.
func (s *Simulator) bind(context.Context) (bool, error) {
	if s.world.version == s.boundAt || s.pendingCount() == 0 {
		return false, nil
	}
	now := s.clock.Now()
	in := s.binderInput()
	nodes := in.Nodes
	changed := false
	if len(in.Pods) > 0 {
		result := provisioning.Solve(in)
		for _, n := range result.Nominations {
			p := s.world.pods[podKey(n.Pod)]
			s.world.bindPod(p, n.NodeName)
			setScheduled(p, corev1.ConditionTrue, "", now)
			// The kubelet starts it at once: a do-not-disrupt duration
			// counts from here (state.DoNotDisruptOf).
			p.Status.StartTime = &metav1.Time{Time: now}
			s.rec.bound(podKey(p))
			changed = true
		}
		// kube-scheduler retries unschedulable pods when nodes join and
		// rewrites their condition (its message counts the nodes), which
		// wakes the provisioner: a pod planned onto a node that registered
		// without room for it (the binder packs differently) must not wait
		// for ever.
		nodesJoined := len(nodes) != s.boundNodes
		for _, u := range result.Unplaced {
			p := s.world.pods[podKey(u.Pod)]
			marked := setScheduled(p, corev1.ConditionFalse, corev1.PodReasonUnschedulable, now)
			if marked || nodesJoined {
				s.batch.Trigger(now, false)
			}
			changed = changed || marked
		}
	}
	s.boundAt, s.boundNodes = s.world.version, len(nodes)
	return changed, nil
}

// setScheduled sets the pod's PodScheduled condition and reports whether
// it changed.
func setScheduled(p *corev1.Pod, status corev1.ConditionStatus, reason string, now time.Time) bool {
	for i, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			if c.Status == status && c.Reason == reason {
				return false
			}
			p.Status.Conditions[i] = corev1.PodCondition{Type: corev1.PodScheduled, Status: status, Reason: reason, LastTransitionTime: metav1.NewTime(now)}
			return true
		}
	}
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodScheduled, Status: status, Reason: reason, LastTransitionTime: metav1.NewTime(now)})
	return true
}

// boundPods are a node's bound pods as binding's snapshot holds them,
// kept across wakes: a wake applies one pod, and rebuilding every node's
// pods and requests at each was the run's cost times the cluster's size.
type boundPods struct {
	pods   []*corev1.Pod
	used   state.Usage
	groups []provisioning.PodGroup
}

// binderInput is the snapshot binding solves, as state.Build would build
// it from the pods and registered nodes alone (no NodePool, no
// NodeClaim): the pending pods, in creation order, and the nodes not
// being deleted, each with its pods re-read only when they changed
// (world.podsChanged).
func (s *Simulator) binderInput() provisioning.Input {
	w := s.world
	if s.bound == nil {
		s.bound, s.shapes = map[string]*boundPods{}, provisioning.NewPodShapes()
	}
	for name := range w.podsChanged {
		delete(s.bound, name)
	}
	clear(w.podsChanged)
	objs := state.Objects{DaemonSets: w.daemonSets, Claims: w.claimsPVC, Volumes: w.volumes, StorageClasses: w.classes}
	for _, name := range slices.Sorted(maps.Keys(w.namespaces)) {
		objs.Namespaces = append(objs.Namespaces, w.namespaces[name])
	}
	in := state.Build(objs, nil, nil).Input
	for _, p := range w.sortedPods() {
		if p.Spec.NodeName == "" && p.DeletionTimestamp == nil && !state.IsTerminal(p) {
			in.Pods = append(in.Pods, p)
		}
	}
	live := make(map[string]*boundPods, len(w.nodes))
	for _, n := range w.sortedNodes() {
		b := s.bound[n.Name]
		if b == nil {
			b = &boundPods{pods: slices.DeleteFunc(w.podsOn(n.Name), state.IsTerminal)}
			b.used, b.groups = state.UsageOf(b.pods), s.shapes.Group(b.pods)
		}
		live[n.Name] = b
		node := state.ExistingNode(n, nil, b.pods, b.used)
		node.Groups = b.groups
		if !node.Deleting {
			in.Nodes = append(in.Nodes, node)
		}
	}
	s.bound = live
	return in
}
