package simulator

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	autoscalingv1 "k8s.io/autoscaler/cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1"
	"k8s.io/utils/ptr"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/controllers/nodepool"
	"github.com/capstan-dev/capstan/pkg/disruption"
	"github.com/capstan-dev/capstan/pkg/drain"
	"github.com/capstan-dev/capstan/pkg/effects"
	"github.com/capstan-dev/capstan/pkg/lifecycle"
	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/provreq"
	"github.com/capstan-dev/capstan/pkg/scaleup"
	"github.com/capstan-dev/capstan/pkg/scheduling"
	"github.com/capstan-dev/capstan/pkg/state"
	"github.com/capstan-dev/capstan/pkg/test"
)

// parityCase is a starting cluster and the effects applied to it; the
// effects are built from the objects as the API server stored them.
type parityCase struct {
	name   string
	faults []simv1alpha1.LaunchFault
	// running launches the first claim's instance in each side's cloud
	// before the start: the claim and every node with the provider id
	// runningID get its provider id.
	running bool
	claims  []*v1.NodeClaim
	nodes   []*corev1.Node
	pods    []*corev1.Pod
	pools   []*v1.NodePool
	// requests are ProvisioningRequests, created with their status.
	requests []*autoscalingv1.ProvisioningRequest
	// effects are built from the claims and nodes as started.
	effects func(claims []*v1.NodeClaim, nodes []*corev1.Node) []effects.Effect
}

// outcome is what the comparison looks at after the effects.
type outcome struct {
	Claims   map[string]claimOutcome
	Nodes    map[string]nodeOutcome
	Pods     []string
	Events   []string
	Attempts map[string]lifecycle.LaunchAttempts
	Requeue  time.Time
	Marked   []cloudprovider.OfferingKey
	// Instances are the provider ids the cloud still runs.
	Instances []string
	Pools     map[string]poolOutcome
	// Requests are the ProvisioningRequests' conditions, by name.
	Requests map[string][]string
	// Trigger is the solve asked for: "", "batched" or "immediate".
	Trigger string
}

// runningID stands for the provider id of a case's running instance.
const runningID = "sim://parity/running"

type claimOutcome struct {
	Labels, Annotations map[string]string
	Finalizers          []string
	Conditions          []string
	Launched            bool
	ImageID, NodeName   string
	Capacity            corev1.ResourceList
	LastPodEventTime    time.Time
	Deleting            bool
}

type poolOutcome struct {
	Annotations map[string]string
	Conditions  []string
	Resources   corev1.ResourceList
}

type nodeOutcome struct {
	Labels     map[string]string
	Taints     []corev1.Taint
	Finalizers []string
	Deleting   bool
}

var parityStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// TestAppliersAgree runs each case's effects through the API server's
// applier (pkg/controllers/apply, on a real control plane) and the
// simulator's (on its world) and compares what they leave: an effect must
// mean the same to `capstan simulate` as to the controller. It compares
// every NodeClaim there is afterwards (a created one too), the instances
// the cloud runs and the solve asked for. Metrics (effects.Metric,
// effects.Observe) are left out: the simulator keeps none, a run reports
// its own numbers (see applyEffects), so there is nothing to compare.
func TestAppliersAgree(t *testing.T) {
	env := test.EnvironmentFor(t)
	ctx := context.Background()
	class := test.SimNodeClass()
	if err := env.Client.Create(ctx, class); err != nil {
		t.Fatal(err)
	}
	claim := func(mods ...func(*v1.NodeClaim)) *v1.NodeClaim {
		return test.NodeClaim(append([]func(*v1.NodeClaim){func(nc *v1.NodeClaim) {
			nc.Spec.NodeClassRef.Name = class.Name
			nc.Labels = map[string]string{v1.NodePoolLabelKey: "default"}
			nc.Finalizers = []string{v1.TerminationFinalizer}
			nc.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{
				{Key: v1.LabelInstanceType, Operator: corev1.NodeSelectorOpIn, Values: []string{"m5.large"}},
				{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{v1.CapacityTypeOnDemand}},
			}
		}}, mods...)...)
	}
	launched := func(providerID string, conds ...string) func(*v1.NodeClaim) {
		return func(nc *v1.NodeClaim) {
			nc.Status.ProviderID = providerID
			for _, c := range conds {
				nc.Status.Conditions = append(nc.Status.Conditions, metav1.Condition{Type: c, Status: metav1.ConditionTrue, Reason: c, LastTransitionTime: metav1.NewTime(parityStart)})
			}
		}
	}
	node := func(providerID string, mods ...func(*corev1.Node)) *corev1.Node {
		n := &corev1.Node{}
		n.Name = test.RandomName("node")
		n.Spec.ProviderID = providerID
		n.Labels = map[string]string{corev1.LabelHostname: n.Name}
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
		for _, m := range mods {
			m(n)
		}
		return n
	}
	step := func(claims []*v1.NodeClaim, nodes []*corev1.Node) []effects.Effect {
		var n *corev1.Node
		if len(nodes) > 0 {
			n = nodes[0]
		}
		_, effs := lifecycle.Step(claims[0], n, parityStart, lifecycle.DefaultTimeouts(), lifecycle.LaunchAttempts{})
		return effs
	}
	pool := test.NodePool(func(np *v1.NodePool) {
		np.Name = test.RandomName("pool")
		np.Spec.Template.Spec.NodeClassRef = &v1.NodeClassReference{Group: simv1alpha1.Group, Kind: "SimNodeClass", Name: "missing"}
	})
	request := &autoscalingv1.ProvisioningRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "parity", Name: "train", CreationTimestamp: metav1.NewTime(parityStart.Add(-time.Hour))},
		Spec: autoscalingv1.ProvisioningRequestSpec{ProvisioningClassName: autoscalingv1.ProvisioningClassBestEffortAtomicScaleUp,
			PodSets: []autoscalingv1.PodSet{{PodTemplateRef: autoscalingv1.Reference{Name: "worker"}, Count: 2}}}}
	for _, tc := range []parityCase{
		{name: "launch records the instance", claims: []*v1.NodeClaim{claim()}, effects: step},
		{name: "a refused launch is kept to retry", claims: []*v1.NodeClaim{claim()},
			faults: []simv1alpha1.LaunchFault{{Code: "UnauthorizedOperation"}}, effects: step},
		{name: "no capacity deletes and re-plans", claims: []*v1.NodeClaim{claim()},
			faults: []simv1alpha1.LaunchFault{{Code: "InsufficientInstanceCapacity"}}, effects: step},
		{name: "the finalizer first", claims: []*v1.NodeClaim{claim(func(nc *v1.NodeClaim) { nc.Finalizers = nil }, launched("sim://parity/i-1", v1.ConditionTypeLaunched))},
			effects: step},
		{name: "register syncs the node", claims: []*v1.NodeClaim{claim(func(nc *v1.NodeClaim) {
			nc.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "ml", Effect: corev1.TaintEffectNoSchedule}}
		}, launched("sim://parity/i-2", v1.ConditionTypeLaunched))},
			nodes: []*corev1.Node{node("sim://parity/i-2", func(n *corev1.Node) { n.Spec.Taints = []corev1.Taint{v1.UnregisteredNoExecuteTaint()} })}, effects: step},
		{name: "initialize", claims: []*v1.NodeClaim{claim(launched("sim://parity/i-3", v1.ConditionTypeLaunched, v1.ConditionTypeRegistered))},
			nodes: []*corev1.Node{node("sim://parity/i-3")}, effects: step},
		{name: "registration timeout deletes", claims: []*v1.NodeClaim{claim(func(nc *v1.NodeClaim) {
			nc.Status.ProviderID = "sim://parity/i-4"
			nc.Status.Conditions = []metav1.Condition{{Type: v1.ConditionTypeLaunched, Status: metav1.ConditionTrue, Reason: "Launched", LastTransitionTime: metav1.NewTime(parityStart.Add(-time.Hour))}}
		})}, effects: step},
		{name: "metadata, conditions, status", claims: []*v1.NodeClaim{claim(func(nc *v1.NodeClaim) { nc.Finalizers = append(nc.Finalizers, "example.com/keep") })},
			effects: func(claims []*v1.NodeClaim, _ []*corev1.Node) []effects.Effect {
				ref := effects.NodeClaimRef(claims[0].Name)
				return []effects.Effect{
					effects.MergeMetadata{Object: ref, Labels: map[string]string{"team": "ml"}, Annotations: map[string]string{"a": "b"}, Finalizers: []string{"example.com/other"}},
					effects.RemoveFinalizer{Object: ref, Finalizer: "example.com/keep"},
					effects.SetCondition{Object: ref, Condition: metav1.Condition{Type: v1.ConditionTypeDrifted, Status: metav1.ConditionTrue, Reason: "NodeClassDrifted", LastTransitionTime: metav1.NewTime(parityStart)}},
					effects.SetCondition{Object: ref, Condition: metav1.Condition{Type: v1.ConditionTypeConsolidatable, Status: metav1.ConditionTrue, Reason: "Consolidatable", LastTransitionTime: metav1.NewTime(parityStart)}},
					effects.RemoveCondition{Object: ref, Type: v1.ConditionTypeDrifted},
					effects.SetNodeClaimStatus{Name: claims[0].Name, ImageID: "ami-1", Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}},
					effects.SetLaunchAttempts{NodeClaim: claims[0].Name, Failures: 2, Last: parityStart},
					effects.RequeueAt{At: parityStart.Add(time.Minute)},
					effects.RequeueAt{At: parityStart.Add(time.Second)},
				}
			}},
		{name: "pod event stamp", claims: []*v1.NodeClaim{claim()}, effects: func(claims []*v1.NodeClaim, _ []*corev1.Node) []effects.Effect {
			return lifecycle.PodEvent(claims[0], parityStart)
		}},
		{name: "delete without a finalizer goes at once", claims: []*v1.NodeClaim{claim(func(nc *v1.NodeClaim) { nc.Finalizers = nil }), claim()},
			effects: func(claims []*v1.NodeClaim, _ []*corev1.Node) []effects.Effect {
				return []effects.Effect{effects.DeleteNodeClaim{Name: claims[0].Name}, effects.DeleteNodeClaim{Name: claims[1].Name}, effects.DeleteNodeClaim{Name: "never-was"}}
			}},
		{name: "nodes", nodes: []*corev1.Node{
			node("sim://parity/i-5", func(n *corev1.Node) { n.Spec.Taints = []corev1.Taint{{Key: "a", Effect: corev1.TaintEffectNoSchedule}} }),
			node("sim://parity/i-6"), node("sim://parity/i-7", func(n *corev1.Node) { n.Finalizers = []string{v1.TerminationFinalizer} }),
		}, effects: func(_ []*v1.NodeClaim, nodes []*corev1.Node) []effects.Effect {
			return []effects.Effect{
				effects.PatchNode{Name: nodes[0].Name, Labels: map[string]string{"x": "y"}, AddTaints: []corev1.Taint{v1.DisruptedNoScheduleTaint(), v1.DisruptedNoScheduleTaint()},
					RemoveTaints: []corev1.Taint{{Key: "a", Effect: corev1.TaintEffectNoSchedule}}, Finalizers: []string{v1.TerminationFinalizer}},
				effects.DeleteNode{Name: nodes[1].Name},
				effects.DeleteNode{Name: nodes[2].Name},
				effects.MergeMetadata{Object: effects.NodeRef(nodes[2].Name), Labels: map[string]string{"z": "1"}},
				effects.RemoveFinalizer{Object: effects.NodeRef(nodes[2].Name), Finalizer: v1.TerminationFinalizer},
				effects.Event{Object: effects.NodeRef(nodes[0].Name), Type: corev1.EventTypeNormal, Reason: "Patched", Action: "Patch", Message: "patched"},
			}
		}},
		{name: "a candidate disrupted", claims: []*v1.NodeClaim{claim(launched("sim://parity/i-8", v1.ConditionTypeLaunched))},
			nodes: []*corev1.Node{node("sim://parity/i-8")}, effects: func(claims []*v1.NodeClaim, nodes []*corev1.Node) []effects.Effect {
				return disruption.Disrupt(claims[0].Name, nodes[0].Name, v1.DisruptionReasonDrifted, "Drift", parityStart)
			}},
		{name: "a stale taint and its reason removed", claims: []*v1.NodeClaim{claim(launched("sim://parity/i-9", v1.ConditionTypeLaunched, v1.ConditionTypeDisruptionReason))},
			nodes: []*corev1.Node{node("sim://parity/i-9", func(n *corev1.Node) { n.Spec.Taints = []corev1.Taint{v1.DisruptedNoScheduleTaint()} })},
			effects: func(claims []*v1.NodeClaim, nodes []*corev1.Node) []effects.Effect {
				return disruption.Undisrupt(nodes[0].Name, claims[0].Name)
			}},
		{name: "a reservation ended", claims: []*v1.NodeClaim{claim(launched("sim://parity/i-11", v1.ConditionTypeLaunched), func(nc *v1.NodeClaim) {
			nc.Labels[v1.CapacityTypeLabelKey], nc.Labels[v1.LabelCapacityReservationID] = v1.CapacityTypeReserved, "cr-1"
			nc.Labels[v1.LabelCapacityReservationType] = v1.ReservationTypeDefault
		})},
			nodes: []*corev1.Node{node("sim://parity/i-11", func(n *corev1.Node) {
				n.Labels[v1.CapacityTypeLabelKey], n.Labels[v1.LabelCapacityReservationID] = v1.CapacityTypeReserved, "cr-1"
			})},
			effects: func(claims []*v1.NodeClaim, nodes []*corev1.Node) []effects.Effect {
				instance := &v1.NodeClaim{}
				instance.Labels = map[string]string{v1.CapacityTypeLabelKey: v1.CapacityTypeOnDemand}
				return lifecycle.ReservationEnded(claims[0], nodes[0], instance, nil)
			}},
		{name: "a forceful deletion", claims: []*v1.NodeClaim{claim(launched("sim://parity/i-10", v1.ConditionTypeLaunched))},
			effects: func(claims []*v1.NodeClaim, _ []*corev1.Node) []effects.Effect {
				return disruption.Forceful(claims[0], v1.DisruptionReasonInterrupted, "interrupted (SpotInterruption)", parityStart.Add(2*time.Minute), parityStart)
			}},
		{name: "pods", pods: []*corev1.Pod{test.Pod("parity", func(p *corev1.Pod) { p.Name = "evicted" }), test.Pod("parity", func(p *corev1.Pod) { p.Name = "deleted" }), test.Pod("parity", func(p *corev1.Pod) { p.Name = "kept" })},
			effects: func([]*v1.NodeClaim, []*corev1.Node) []effects.Effect {
				return []effects.Effect{effects.EvictPod{Namespace: "parity", Name: "evicted"}, effects.DeletePod{Namespace: "parity", Name: "deleted", GracePeriodSeconds: ptr.To[int64](0)},
					effects.EvictPod{Namespace: "parity", Name: "gone"}, effects.TriggerSolve{Immediate: true}}
			}},
		{name: "drain: taint, delete the node, evict, delete early", claims: []*v1.NodeClaim{claim(launched("sim://parity/i-8", v1.ConditionTypeLaunched))},
			nodes: []*corev1.Node{node("sim://parity/i-8", func(n *corev1.Node) { n.Finalizers = []string{v1.TerminationFinalizer} })},
			pods: []*corev1.Pod{
				test.Pod("parity", func(p *corev1.Pod) { p.Name = "web"; p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](30) }),
				test.Pod("parity", func(p *corev1.Pod) {
					p.Name, p.Annotations = "batch", map[string]string{v1.DoNotDisruptAnnotationKey: "true"}
					p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](600)
				}),
			},
			effects: func(claims []*v1.NodeClaim, nodes []*corev1.Node) []effects.Effect {
				// Deleted 55 minutes ago with an hour's grace: web is
				// evicted, batch deleted so its grace period ends in time.
				nc := claims[0].DeepCopy()
				deleted := metav1.NewTime(parityStart.Add(-55 * time.Minute))
				nc.DeletionTimestamp, nc.Spec.TerminationGracePeriod = &deleted, &metav1.Duration{Duration: time.Hour}
				var pods []*corev1.Pod
				for _, name := range []string{"web", "batch"} {
					p := test.Pod("parity", func(p *corev1.Pod) { p.Name = name })
					if name == "batch" {
						p.Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: "true"}
						p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](600)
					} else {
						p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](30)
					}
					pods = append(pods, p)
				}
				return drain.Drain(drain.Termination{NodeClaim: nc, Node: nodes[0], Pods: pods, Now: parityStart}).Effects
			}},
		{name: "finish: terminated, finalizers released, slack observed", claims: []*v1.NodeClaim{claim(launched("sim://parity/i-9", v1.ConditionTypeLaunched))},
			nodes: []*corev1.Node{node("sim://parity/i-9", func(n *corev1.Node) { n.Finalizers = []string{v1.TerminationFinalizer} })},
			effects: func(claims []*v1.NodeClaim, nodes []*corev1.Node) []effects.Effect {
				return append(drain.Finish(claims[0], nodes[0], true).Effects, effects.Observe{Name: drain.SlackMetric, Value: 5})
			}},
		{name: "finish: the instance terminated", running: true, claims: []*v1.NodeClaim{claim(launched("", v1.ConditionTypeLaunched))},
			nodes: []*corev1.Node{node(runningID, func(n *corev1.Node) { n.Finalizers = []string{v1.TerminationFinalizer} })},
			effects: func(claims []*v1.NodeClaim, nodes []*corev1.Node) []effects.Effect {
				return drain.Finish(claims[0], nodes[0], false).Effects
			}},
		{name: "garbage collected: a leaked instance and an orphaned claim", running: true,
			claims: []*v1.NodeClaim{claim(launched("", v1.ConditionTypeLaunched)), claim(launched("sim://parity/i-12", v1.ConditionTypeLaunched))},
			nodes:  []*corev1.Node{node(runningID), node("sim://parity/i-12", func(n *corev1.Node) { n.Finalizers = []string{v1.TerminationFinalizer} })},
			effects: func(claims []*v1.NodeClaim, nodes []*corev1.Node) []effects.Effect {
				return lifecycle.Collected(lifecycle.Decision{Terminate: []*v1.NodeClaim{claims[0]}, Delete: []*v1.NodeClaim{claims[1]}}, []corev1.Node{*nodes[0], *nodes[1]})
			}},
		{name: "a node's deletion cascades", claims: []*v1.NodeClaim{claim(launched("sim://parity/i-10", v1.ConditionTypeLaunched))},
			nodes: []*corev1.Node{node("sim://parity/i-10", func(n *corev1.Node) { n.Finalizers = []string{v1.TerminationFinalizer} })},
			effects: func(claims []*v1.NodeClaim, nodes []*corev1.Node) []effects.Effect {
				deleting := nodes[0].DeepCopy()
				deleting.DeletionTimestamp = ptr.To(metav1.NewTime(parityStart))
				return drain.NodeDeleted(deleting, claims)
			}},
		{name: "a nodepool's hash, failure and status", pools: []*v1.NodePool{pool}, effects: func([]*v1.NodeClaim, []*corev1.Node) []effects.Effect {
			return nodepool.Decision{Annotations: map[string]string{v1.NodePoolHashAnnotationKey: "123"}, Status: v1.NodePoolStatus{
				Resources:  corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")},
				Conditions: []metav1.Condition{{Type: v1.ConditionTypeNodeClassReady, Status: metav1.ConditionFalse, Reason: "NodeClassNotFound", Message: "SimNodeClass missing not found", LastTransitionTime: metav1.NewTime(parityStart)}},
			}}.Effects(pool)
		}},
		{name: "a provisioning decision", pods: []*corev1.Pod{test.Pod("parity", func(p *corev1.Pod) { p.Name = "huge" })},
			effects: func([]*v1.NodeClaim, []*corev1.Node) []effects.Effect {
				nc := claim()
				huge := test.Pod("parity", func(p *corev1.Pod) { p.Name = "huge" })
				return scaleup.Decision{
					Result: provisioning.Result{
						NewNodeClaims: []*provisioning.NodeClaim{{NodePool: "default", Requirements: scheduling.NewRequirements()}},
						Unplaced:      []provisioning.Unplaced{{Pod: huge, Reason: "NoInstanceTypeFits", Message: "no instance type has 100 cpu"}},
					},
					NodeClaims: []*v1.NodeClaim{nc},
				}.Effects()
			}},
		{name: "a provisioning request's conditions and event", requests: []*autoscalingv1.ProvisioningRequest{request},
			effects: func([]*v1.NodeClaim, []*corev1.Node) []effects.Effect {
				// Its PodTemplate missing past the grace: Accepted, then
				// Failed with an event.
				return provreq.Decide(provreq.Request{Object: request}, state.Snapshot{}, provreq.Options{}, parityStart).Effects(request)
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			apiSide := newAPISide(t, env.Client, tc)
			s := parityWorld(t, class, tc)
			if tc.running {
				id := launchParity(t, apiSide.cloud, tc.claims[0])
				if got := launchParity(t, s.cloud, tc.claims[0]); got != id {
					t.Fatalf("the clouds launched %s and %s", id, got)
				}
				tc.claims[0] = tc.claims[0].DeepCopy()
				tc.claims[0].Status.ProviderID = id
				tc.nodes = slices.Clone(tc.nodes)
				for i, n := range tc.nodes {
					if n.Spec.ProviderID == runningID {
						tc.nodes[i] = n.DeepCopy()
						tc.nodes[i].Spec.ProviderID = id
					}
				}
			}
			claims, nodes := startParity(t, env.Client, tc)
			effs := tc.effects(claims, nodes)
			api := applyToAPI(t, env.Client, apiSide, tc, claims, nodes, effs)
			world := applyToWorld(t, s, tc, claims, nodes, effs)
			if diff := cmp.Diff(api, world, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("the appliers differ (-API server +simulator):\n%s", diff)
			}
		})
	}
}
