package lifecycle

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/effects"
)

func cond(t string, s metav1.ConditionStatus, reason, message string, at time.Time) metav1.Condition {
	return metav1.Condition{Type: t, Status: s, Reason: reason, Message: message, LastTransitionTime: metav1.NewTime(at)}
}

func setCond(name string, c metav1.Condition) effects.SetCondition {
	return effects.SetCondition{Object: effects.NodeClaimRef(name), Condition: c}
}

func TestStep(t *testing.T) {
	timeouts := Timeouts{Launch: 5 * time.Minute, Registration: 15 * time.Minute}
	claim := func(mods ...func(*v1.NodeClaim)) *v1.NodeClaim {
		nc := claimWith()
		nc.Name, nc.Finalizers, nc.CreationTimestamp = "nc", []string{v1.TerminationFinalizer}, metav1.NewTime(t0)
		nc.Labels = map[string]string{v1.NodePoolLabelKey: "default"}
		for _, m := range mods {
			m(nc)
		}
		return nc
	}
	launchedAt := func(conds ...string) func(*v1.NodeClaim) {
		return func(nc *v1.NodeClaim) {
			nc.Status.ProviderID = "sim://a/i-1"
			for _, c := range conds {
				nc.Status.Conditions = append(nc.Status.Conditions, cond(c, metav1.ConditionTrue, c, "", t0))
			}
		}
	}
	node := readyNode(func(n *corev1.Node) {
		n.Name, n.Labels = "n1", map[string]string{}
		n.Spec.Taints = []corev1.Taint{v1.UnregisteredNoExecuteTaint()}
	})
	now := t0.Add(time.Minute)
	// synced are the labels registration put on the node.
	synced := map[string]string{v1.NodePoolLabelKey: "default"}
	spotLabels := func(nc *v1.NodeClaim) {
		nc.Labels[v1.CapacityTypeLabelKey] = v1.CapacityTypeSpot
		nc.Labels[v1.InterruptibleLabelKey] = "true"
		nc.Labels[v1.LabelInstanceType] = "m5.large"
		nc.Labels[v1.LabelHostname] = "ip-10-0-0-1"
		nc.Labels["team"] = "web"
		nc.Status.NodeName = "n1"
	}
	for _, tc := range []struct {
		name   string
		nc     *v1.NodeClaim
		node   *corev1.Node
		now    time.Time
		action Action
		want   func(nc *v1.NodeClaim) []effects.Effect
	}{
		{"launch, the finalizer first", claim(func(nc *v1.NodeClaim) { nc.Finalizers = nil }), nil, now, Launch, func(nc *v1.NodeClaim) []effects.Effect {
			return []effects.Effect{effects.MergeMetadata{Object: effects.NodeClaimRef("nc"), Finalizers: []string{v1.TerminationFinalizer}}, effects.Launch{NodeClaim: nc}}
		}},
		{"a launch after failures comes back by the launch timeout", claim(func(nc *v1.NodeClaim) {
			nc.Status.Conditions = []metav1.Condition{cond(v1.ConditionTypeLaunched, metav1.ConditionFalse, "UnauthorizedOperation", "", t0.Add(time.Second))}
		}), nil, now, Launch, func(nc *v1.NodeClaim) []effects.Effect {
			return []effects.Effect{effects.Launch{NodeClaim: nc}, effects.RequeueAt{At: t0.Add(5*time.Minute + time.Second)}}
		}},
		{"launch timeout deletes and re-plans", claim(), nil, t0.Add(5 * time.Minute), LaunchTimeout, func(*v1.NodeClaim) []effects.Effect {
			msg := "not launched within 5m0s; no launch attempt finished"
			return []effects.Effect{
				effects.Event{Object: effects.NodeClaimRef("nc"), Type: corev1.EventTypeWarning, Reason: "LaunchTimeout", Action: "Launch", Message: msg},
				effects.SetLaunchAttempts{NodeClaim: "nc"}, effects.DeleteNodeClaim{Name: "nc"}, effects.TriggerSolve{Immediate: true},
			}
		}},
		{"register syncs the node and records it", claim(launchedAt(v1.ConditionTypeLaunched)), node, now, Register, func(*v1.NodeClaim) []effects.Effect {
			return []effects.Effect{
				effects.PatchNode{Name: "n1", Labels: map[string]string{v1.NodePoolLabelKey: "default", v1.NodeRegisteredLabelKey: "true"},
					RemoveTaints: []corev1.Taint{v1.UnregisteredNoExecuteTaint()}, Finalizers: []string{v1.TerminationFinalizer}},
				effects.SetNodeClaimStatus{Name: "nc", NodeName: "n1"},
				setCond("nc", cond(v1.ConditionTypeRegistered, metav1.ConditionTrue, "Registered", "node n1", now)),
				setCond("nc", cond(v1.ConditionTypeReady, metav1.ConditionFalse, "NotInitialized", "Initialized is not yet true", now)),
				effects.Event{Object: effects.NodeClaimRef("nc"), Type: corev1.EventTypeNormal, Reason: "Registered", Action: "Register", Message: "node n1 registered"},
			}
		}},
		{"initialize: Ready", claim(launchedAt(v1.ConditionTypeLaunched, v1.ConditionTypeRegistered)), readyNode(func(n *corev1.Node) { n.Name, n.Labels = "n1", synced }), now, Initialize, func(*v1.NodeClaim) []effects.Effect {
			return []effects.Effect{
				effects.PatchNode{Name: "n1", Labels: map[string]string{v1.NodeInitializedLabelKey: "true"}},
				setCond("nc", cond(v1.ConditionTypeInitialized, metav1.ConditionTrue, "Initialized", "node is ready", now)),
				setCond("nc", cond(v1.ConditionTypeReady, metav1.ConditionTrue, "Ready", "", now)),
			}
		}},
		{"registration timeout deletes, to be drained, and re-plans its pods", claim(launchedAt(v1.ConditionTypeLaunched)), nil, t0.Add(15 * time.Minute), Expire, func(*v1.NodeClaim) []effects.Effect {
			return []effects.Effect{
				effects.Event{Object: effects.NodeClaimRef("nc"), Type: corev1.EventTypeWarning, Reason: "RegistrationTimeout", Action: "Delete", Message: "no node registered within 15m0s of launch"},
				effects.DeleteNodeClaim{Name: "nc", Reason: DeletedRegistrationTimeout},
				effects.TriggerSolve{Immediate: true},
			}
		}},
		{"waiting for the node requeues at the timeout", claim(launchedAt(v1.ConditionTypeLaunched)), nil, now, Wait, func(*v1.NodeClaim) []effects.Effect {
			return []effects.Effect{effects.RequeueAt{At: t0.Add(15 * time.Minute)}}
		}},
		{"initialized: nothing", claim(launchedAt(v1.ConditionTypeLaunched, v1.ConditionTypeRegistered, v1.ConditionTypeInitialized)), readyNode(func(n *corev1.Node) { n.Labels = synced }), now, Done, func(*v1.NodeClaim) []effects.Effect { return nil }},
		// Seed 000: cluster.x-k8s.io/interruptible is on the node as long
		// as the instance is interruptible. The NodeClaim's well-known
		// labels are put back on its node whenever they go or change;
		// the hostname and other labels (the template's) are left to
		// whoever changed them.
		{"a registered node's lost labels are restored", claim(launchedAt(v1.ConditionTypeLaunched, v1.ConditionTypeRegistered, v1.ConditionTypeInitialized), spotLabels),
			readyNode(func(n *corev1.Node) {
				n.Name = "n1"
				n.Labels = map[string]string{v1.NodePoolLabelKey: "default", v1.CapacityTypeLabelKey: v1.CapacityTypeOnDemand, v1.LabelHostname: "n1"}
			}), now, Done, func(*v1.NodeClaim) []effects.Effect {
				return []effects.Effect{effects.PatchNode{Name: "n1", Labels: map[string]string{
					v1.InterruptibleLabelKey: "true", v1.CapacityTypeLabelKey: v1.CapacityTypeSpot, v1.LabelInstanceType: "m5.large"}}}
			}},
		{"only onto the node it registered", claim(launchedAt(v1.ConditionTypeLaunched, v1.ConditionTypeRegistered, v1.ConditionTypeInitialized), spotLabels),
			readyNode(func(n *corev1.Node) { n.Name, n.Labels = "n2", synced }), now, Done, func(*v1.NodeClaim) []effects.Effect { return nil }},
		{"restored while it initializes too", claim(launchedAt(v1.ConditionTypeLaunched, v1.ConditionTypeRegistered), spotLabels),
			readyNode(func(n *corev1.Node) { n.Name, n.Labels = "n1", map[string]string{v1.NodePoolLabelKey: "default"} }), now, Initialize, func(*v1.NodeClaim) []effects.Effect {
				return []effects.Effect{
					effects.PatchNode{Name: "n1", Labels: map[string]string{
						v1.InterruptibleLabelKey: "true", v1.CapacityTypeLabelKey: v1.CapacityTypeSpot, v1.LabelInstanceType: "m5.large"}},
					effects.PatchNode{Name: "n1", Labels: map[string]string{v1.NodeInitializedLabelKey: "true"}},
					setCond("nc", cond(v1.ConditionTypeInitialized, metav1.ConditionTrue, "Initialized", "node is ready", now)),
					setCond("nc", cond(v1.ConditionTypeReady, metav1.ConditionTrue, "Ready", "", now)),
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			attempts := LaunchAttempts{}
			if c := meta.FindStatusCondition(tc.nc.Status.Conditions, v1.ConditionTypeLaunched); c != nil && c.Status == metav1.ConditionFalse {
				attempts = LaunchAttempts{Failures: 1, Last: c.LastTransitionTime.Time}
			}
			action, got := Step(tc.nc, tc.node, tc.now, timeouts, attempts)
			if action != tc.action {
				t.Errorf("action %v, want %v", action, tc.action)
			}
			if diff := cmp.Diff(tc.want(tc.nc), got); diff != "" {
				t.Errorf("effects (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAfterLaunch(t *testing.T) {
	nc := &v1.NodeClaim{}
	nc.Name, nc.Labels = "nc", map[string]string{v1.NodePoolLabelKey: "default"}
	created := &v1.NodeClaim{}
	created.Labels = map[string]string{v1.LabelInstanceType: "m5.large", v1.CapacityTypeLabelKey: v1.CapacityTypeSpot, v1.LabelZone: "us-west-2a"}
	created.Annotations = map[string]string{"hash": "1"}
	created.Status.ProviderID, created.Status.ImageID = "sim://a/i-1", "ami-1"
	launched := cond(v1.ConditionTypeLaunched, metav1.ConditionTrue, "Launched", "instance sim://a/i-1", t0)
	want := []effects.Effect{
		effects.SetLaunchAttempts{NodeClaim: "nc"},
		effects.MergeMetadata{Object: effects.NodeClaimRef("nc"), Labels: created.Labels, Annotations: created.Annotations},
		effects.SetNodeClaimStatus{Name: "nc", ProviderID: "sim://a/i-1", ImageID: "ami-1"},
		setCond("nc", launched),
		setCond("nc", cond(v1.ConditionTypeReady, metav1.ConditionFalse, "NotRegistered", "Registered is not yet true", t0)),
		effects.Event{Object: effects.NodeClaimRef("nc"), Type: corev1.EventTypeNormal, Reason: "Launched", Action: "Launch", Message: "launched m5.large (spot, us-west-2a)"},
	}
	if diff := cmp.Diff(want, AfterLaunch(nc, created, nil, LaunchAttempts{Failures: 1, Last: t0}, t0)); diff != "" {
		t.Errorf("launched (-want +got):\n%s", diff)
	}

	// Any error that is not for want of capacity keeps the NodeClaim to
	// retry after the backoff, as a refusal does: simulate and the
	// controller alike.
	failed := AfterLaunch(nc, nil, errors.New("connection reset"), LaunchAttempts{Failures: 1, Last: t0}, t0.Add(time.Second))
	wantFailed := []effects.Effect{
		effects.Event{Object: effects.NodeClaimRef("nc"), Type: corev1.EventTypeWarning, Reason: "LaunchFailed", Action: "Launch", Message: "connection reset"},
		effects.SetLaunchAttempts{NodeClaim: "nc", Failures: 2, Last: t0.Add(time.Second)},
		setCond("nc", cond(v1.ConditionTypeLaunched, metav1.ConditionFalse, "LaunchFailed", "connection reset", t0.Add(time.Second))),
		setCond("nc", cond(v1.ConditionTypeReady, metav1.ConditionFalse, "NotLaunched", "Launched is not yet true", t0.Add(time.Second))),
		effects.RequeueAt{At: t0.Add(3 * time.Second)},
	}
	if diff := cmp.Diff(wantFailed, failed); diff != "" {
		t.Errorf("failed (-want +got):\n%s", diff)
	}

	ice := cloudprovider.NewLaunchError([]cloudprovider.OfferingError{{Offering: cloudprovider.OfferingKey{CapacityType: v1.CapacityTypeSpot, InstanceType: "m5.large", Zone: "us-west-2a"}, Code: "InsufficientInstanceCapacity"}}, errors.New("launching nodeclaim nc"))
	var kinds []string
	for _, e := range AfterLaunch(nc, nil, ice, LaunchAttempts{}, t0) {
		kinds = append(kinds, typeName(e))
	}
	if diff := cmp.Diff([]string{"MarkUnavailable", "Event", "SetLaunchAttempts", "DeleteNodeClaim", "TriggerSolve"}, kinds); diff != "" {
		t.Errorf("no capacity (-want +got):\n%s", diff)
	}
}

func typeName(e effects.Effect) string {
	switch e.(type) {
	case effects.MarkUnavailable:
		return "MarkUnavailable"
	case effects.Event:
		return "Event"
	case effects.SetLaunchAttempts:
		return "SetLaunchAttempts"
	case effects.DeleteNodeClaim:
		return "DeleteNodeClaim"
	case effects.TriggerSolve:
		return "TriggerSolve"
	}
	return "other"
}

func TestPodEvent(t *testing.T) {
	nc := &v1.NodeClaim{}
	nc.Name = "nc"
	want := []effects.Effect{effects.SetNodeClaimStatus{Name: "nc", LastPodEventTime: ptr.To(metav1.NewTime(t0))}}
	if diff := cmp.Diff(want, PodEvent(nc, t0)); diff != "" {
		t.Errorf("first stamp (-want +got):\n%s", diff)
	}
	nc.Status.LastPodEventTime = metav1.NewTime(t0)
	if got := PodEvent(nc, t0.Add(PodEventDedupe-time.Second)); got != nil {
		t.Errorf("stamped again within the dedupe window: %v", got)
	}
}

func TestCollected(t *testing.T) {
	leaked := &v1.NodeClaim{}
	leaked.Name, leaked.Status.ProviderID = "leaked", "sim://a/i-1"
	orphan := &v1.NodeClaim{}
	orphan.Name, orphan.Status.ProviderID = "orphan", "sim://a/i-2"
	nodes := []corev1.Node{{Spec: corev1.NodeSpec{ProviderID: "sim://a/i-1"}}, {Spec: corev1.NodeSpec{ProviderID: "sim://a/i-3"}}}
	nodes[0].Name, nodes[1].Name = "leaked-node", "other"
	want := []effects.Effect{
		effects.Terminate{NodeClaim: leaked},
		effects.Event{Object: effects.NodeClaimRef("leaked"), Type: corev1.EventTypeWarning, Reason: "InstanceLeaked", Action: "Terminate", Message: "no NodeClaim owns instance sim://a/i-1; terminated"},
		effects.DeleteNode{Name: "leaked-node"},
		effects.Event{Object: effects.NodeClaimRef("orphan"), Type: corev1.EventTypeWarning, Reason: "InstanceGone", Action: "Delete", Message: "instance sim://a/i-2 no longer exists"},
		effects.DeleteNodeClaim{Name: "orphan", Reason: DeletedInstanceTerminated},
	}
	if diff := cmp.Diff(want, Collected(Decision{Terminate: []*v1.NodeClaim{leaked}, Delete: []*v1.NodeClaim{orphan}}, nodes)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
