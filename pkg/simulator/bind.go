package simulator

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/utils/ptr"

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
	objs := s.world.objects()
	objs.NodePools, objs.NodeClaims = nil, nil
	snapshot := state.Build(objs, nil, nil)
	in := snapshot.Input
	in.Pods = nil
	for i := range objs.Pods {
		p := &objs.Pods[i]
		if p.Spec.NodeName == "" && p.DeletionTimestamp == nil && !state.IsTerminal(p) {
			in.Pods = append(in.Pods, p)
		}
	}
	var nodes []*provisioning.Node
	for _, n := range in.Nodes {
		if !n.Deleting && !n.InFlight {
			nodes = append(nodes, n)
		}
	}
	in.Nodes = nodes
	changed := false
	if len(in.Pods) > 0 {
		result := provisioning.Solve(in)
		for _, n := range result.Nominations {
			p := s.world.pods[podKey(n.Pod)]
			s.world.bindPod(p, n.NodeName)
			setScheduled(p, corev1.ConditionTrue, "", now)
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
