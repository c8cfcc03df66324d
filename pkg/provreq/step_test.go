package provreq

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	autoscalingv1 "k8s.io/autoscaler/cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/gang"
	"github.com/capstan-dev/capstan/pkg/state"
	"github.com/capstan-dev/capstan/pkg/test"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// snapshot is an empty cluster whose one NodePool launches 4-core nodes,
// 8 cores at most.
func snapshot() state.Snapshot {
	np := test.NodePool(func(np *v1.NodePool) {
		np.Name = "default"
		np.Spec.Limits = v1.Limits{corev1.ResourceCPU: resource.MustParse("8")}
	})
	its := []*cloudprovider.InstanceType{test.InstanceType(test.InstanceTypeOptions{Name: "c.xlarge", CPU: 4, Memory: 16})}
	return state.Build(state.Objects{NodePools: []v1.NodePool{*np}}, map[string][]*cloudprovider.InstanceType{"default": its}, []string{corev1.DefaultSchedulerName})
}

func template(cpu string) *corev1.PodTemplate {
	t := &corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "workers"}}
	t.Template.Spec.Containers = []corev1.Container{{Name: "w", Image: "w", Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)},
	}}}
	return t
}

func request(class string, count int32, conds ...metav1.Condition) *autoscalingv1.ProvisioningRequest {
	pr := &autoscalingv1.ProvisioningRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job", UID: "u1", Generation: 1, CreationTimestamp: metav1.NewTime(t0)}}
	pr.Spec.ProvisioningClassName = class
	pr.Spec.PodSets = []autoscalingv1.PodSet{{PodTemplateRef: autoscalingv1.Reference{Name: "workers"}, Count: count}}
	pr.Status.Conditions = conds
	return pr
}

func cond(typ string, status metav1.ConditionStatus, reason, message string, at time.Time) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: message, ObservedGeneration: 1, LastTransitionTime: metav1.NewTime(at)}
}

var accepted = cond(autoscalingv1.Accepted, metav1.ConditionTrue, ReasonAccepted, MessageAccepted, t0)

func claim(name string, size string, conds ...metav1.Condition) *v1.NodeClaim {
	nc := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{
		gang.AtomicGroupAnnotationKey: "ProvisioningRequest/ns/job", gang.AtomicGroupSizeAnnotationKey: size,
	}}}
	nc.Status.Conditions = conds
	return nc
}

func consumer(name, node string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Annotations: map[string]string{
		autoscalingv1.ProvisioningRequestPodAnnotationKey: "job",
	}}}
	p.Spec.NodeName = node
	return p
}

const (
	check  = autoscalingv1.ProvisioningClassCheckCapacity
	atomic = autoscalingv1.ProvisioningClassBestEffortAtomicScaleUp
)

func TestDecide(t *testing.T) {
	provisionedAt := t0.Add(time.Minute)
	provisioned := cond(autoscalingv1.Provisioned, metav1.ConditionTrue, ReasonCapacityIsProvisioned, "Capacity is provisioned: 2 NodeClaims registered", provisionedAt)
	launched := cond(v1.ConditionTypeLaunched, metav1.ConditionTrue, "Launched", "", t0)
	registered := cond(v1.ConditionTypeRegistered, metav1.ConditionTrue, "Registered", "", t0)
	iceFailed := cond(v1.ConditionTypeLaunched, metav1.ConditionFalse, "InsufficientCapacity", "no spot capacity", t0)
	type want struct {
		phase      Phase
		conditions []metav1.Condition
		events     []string
		virtual    int
		requeue    time.Time
		left       time.Duration
	}
	cases := []struct {
		name      string
		pr        *autoscalingv1.ProvisioningRequest
		cpu       string
		noTmpl    bool
		claims    []*v1.NodeClaim
		consumers []*corev1.Pod
		now       time.Time
		want      want
	}{
		{
			name: "an unknown class is ignored", pr: request("queued-provisioning.gke.io", 2), cpu: "1", now: t0,
			want: want{phase: PhaseIgnored},
		},
		{
			name: "check-capacity: the pods fit what the NodePool can launch", pr: request(check, 2), cpu: "3", now: t0,
			want: want{phase: PhaseProvisioned, conditions: []metav1.Condition{accepted,
				cond(autoscalingv1.Provisioned, metav1.ConditionTrue, ReasonCapacityIsFound, MessageCapacityIsFound, t0)},
				events: []string{"ProvisioningRequestProvisioned"}},
		},
		{
			name: "check-capacity: the NodePool's limit leaves a pod out; checked again later", pr: request(check, 3, accepted), cpu: "3", now: t0,
			want: want{phase: PhasePending, conditions: []metav1.Condition{
				cond(autoscalingv1.Provisioned, metav1.ConditionFalse, ReasonCapacityIsNotFound, "", t0)},
				requeue: t0.Add(DefaultRetryInterval)},
		},
		{
			name: "check-capacity provisioned holds nothing", pr: request(check, 2, accepted, provisioned), cpu: "3", now: provisionedAt.Add(time.Hour),
			want: want{phase: PhaseProvisioned},
		},
		{
			name: "atomic: the pods need new NodeClaims, held as virtual pods for the provisioner", pr: request(atomic, 2, accepted), cpu: "3", now: t0,
			want: want{phase: PhasePending, virtual: 2, conditions: []metav1.Condition{
				cond(autoscalingv1.Provisioned, metav1.ConditionFalse, ReasonNodeClaimsLaunching, "Launching 2 NodeClaims for 2 pods, all or none", t0)},
				requeue: t0.Add(DefaultExpiry)},
		},
		{
			name: "atomic: no solve places them all, none launched", pr: request(atomic, 3, accepted), cpu: "3", now: t0,
			want: want{phase: PhasePending, virtual: 3, conditions: []metav1.Condition{
				cond(autoscalingv1.Provisioned, metav1.ConditionFalse, ReasonCapacityIsNotFound, "", t0)},
				requeue: t0.Add(DefaultExpiry)},
		},
		{
			name: "atomic: every NodeClaim of the group registered", pr: request(atomic, 2, accepted), cpu: "3", now: provisionedAt,
			claims: []*v1.NodeClaim{claim("a", "2", launched, registered), claim("b", "2", launched, registered)},
			want: want{phase: PhaseProvisioned, virtual: 2, conditions: []metav1.Condition{
				cond(autoscalingv1.Provisioned, metav1.ConditionTrue, ReasonCapacityIsProvisioned, "Capacity is provisioned: 2 NodeClaims registered", provisionedAt)},
				events: []string{"ProvisioningRequestProvisioned"}, requeue: provisionedAt.Add(DefaultBookingDuration), left: DefaultBookingDuration},
		},
		{
			name: "atomic: one of two launched so far", pr: request(atomic, 2, accepted), cpu: "3", now: t0,
			claims: []*v1.NodeClaim{claim("a", "2", launched, registered)},
			want: want{phase: PhasePending, virtual: 2, conditions: []metav1.Condition{
				cond(autoscalingv1.Provisioned, metav1.ConditionFalse, ReasonNodeClaimsLaunching, "1 of 2 NodeClaims registered", t0)},
				requeue: t0.Add(DefaultExpiry)},
		},
		{
			name: "atomic: a NodeClaim of the group failed to launch; the group is released", pr: request(atomic, 2, accepted), cpu: "3", now: t0,
			claims: []*v1.NodeClaim{claim("a", "2", launched, registered), claim("b", "2", iceFailed)},
			want: want{phase: PhasePending, virtual: 2, conditions: []metav1.Condition{
				cond(autoscalingv1.Provisioned, metav1.ConditionFalse, ReasonNodeClaimLaunchFailed, "", t0)},
				requeue: t0.Add(DefaultExpiry)},
		},
		{
			name: "booked: a bound consuming pod replaces its virtual pod", pr: request(atomic, 2, accepted, provisioned), cpu: "3",
			consumers: []*corev1.Pod{consumer("w-0", "node-a")}, now: provisionedAt.Add(4 * time.Minute),
			want: want{phase: PhaseBooked, virtual: 1, requeue: provisionedAt.Add(DefaultBookingDuration), left: 6 * time.Minute},
		},
		{
			name: "booked: a pending consuming pod replaces its virtual pod too", pr: request(atomic, 2, accepted, provisioned), cpu: "3",
			consumers: []*corev1.Pod{consumer("w-0", ""), consumer("w-1", "")}, now: provisionedAt,
			want: want{phase: PhaseBooked, virtual: 0, requeue: provisionedAt.Add(DefaultBookingDuration), left: DefaultBookingDuration},
		},
		{
			name: "every consuming pod bound: the booking is consumed", pr: request(atomic, 2, accepted, provisioned), cpu: "3",
			consumers: []*corev1.Pod{consumer("w-0", "node-a"), consumer("w-1", "node-b")}, now: provisionedAt.Add(time.Minute),
			want: want{phase: PhaseBookingExpired, conditions: []metav1.Condition{
				cond(autoscalingv1.BookingExpired, metav1.ConditionTrue, ReasonBookingConsumed, MessageBookingConsumed, provisionedAt.Add(time.Minute))},
				events: []string{"ProvisioningRequestBookingConsumed"}},
		},
		{
			name: "the booking expires after ten minutes", pr: request(atomic, 2, accepted, provisioned), cpu: "3",
			consumers: []*corev1.Pod{consumer("w-0", "node-a")}, now: provisionedAt.Add(DefaultBookingDuration),
			want: want{phase: PhaseBookingExpired, conditions: []metav1.Condition{
				cond(autoscalingv1.BookingExpired, metav1.ConditionTrue, ReasonReservationExpired, MessageReservationExpired, provisionedAt.Add(DefaultBookingDuration))},
				events: []string{"ProvisioningRequestBookingExpired"}},
		},
		{
			name: "an expired booking holds nothing", cpu: "3", now: provisionedAt.Add(time.Hour),
			pr:   request(atomic, 2, accepted, provisioned, cond(autoscalingv1.BookingExpired, metav1.ConditionTrue, ReasonReservationExpired, MessageReservationExpired, provisionedAt.Add(DefaultBookingDuration))),
			want: want{phase: PhaseBookingExpired},
		},
		{
			name: "a PodTemplate not seen yet is waited for", pr: request(atomic, 2, accepted), noTmpl: true, now: t0.Add(time.Second),
			want: want{phase: PhasePending, requeue: t0.Add(DefaultTemplateGrace)},
		},
		{
			name: "a PodTemplate still missing fails the request", pr: request(atomic, 2, accepted), noTmpl: true, now: t0.Add(DefaultTemplateGrace),
			want: want{phase: PhaseFailed, conditions: []metav1.Condition{
				cond(autoscalingv1.Failed, metav1.ConditionTrue, ReasonFailedToCreatePods, "pod set 0: PodTemplate ns/workers not found", t0.Add(DefaultTemplateGrace))},
				events: []string{"ProvisioningRequestFailed"}},
		},
		{
			name: "unprovisioned for seven days: expired", pr: request(atomic, 3, accepted), cpu: "3", now: t0.Add(DefaultExpiry),
			want: want{phase: PhaseFailed, conditions: []metav1.Condition{
				cond(autoscalingv1.Failed, metav1.ConditionTrue, ReasonExpired, MessageExpired, t0.Add(DefaultExpiry))},
				events: []string{"ProvisioningRequestFailed"}},
		},
		{
			name: "ValidUntilSeconds shortens the wait", cpu: "3", now: t0.Add(time.Minute),
			pr: func() *autoscalingv1.ProvisioningRequest {
				pr := request(atomic, 3, accepted)
				pr.Spec.Parameters = map[string]autoscalingv1.Parameter{ParameterValidUntilSeconds: "60"}
				return pr
			}(),
			want: want{phase: PhaseFailed, conditions: []metav1.Condition{
				cond(autoscalingv1.Failed, metav1.ConditionTrue, ReasonExpired, MessageExpired, t0.Add(time.Minute))},
				events: []string{"ProvisioningRequestFailed"}},
		},
		{
			name: "a failed request stays failed", cpu: "3", now: t0.Add(time.Hour),
			pr:   request(atomic, 3, accepted, cond(autoscalingv1.Failed, metav1.ConditionTrue, ReasonExpired, MessageExpired, t0)),
			want: want{phase: PhaseFailed},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := Request{Object: tc.pr, Claims: tc.claims, Consumers: tc.consumers, Templates: map[string]*corev1.PodTemplate{}}
			if !tc.noTmpl {
				r.Templates["workers"] = template(tc.cpu)
			}
			d := Decide(r, snapshot(), Options{}, tc.now)
			if held := VirtualPods([]Request{r}); len(d.Conditions) == 0 && len(held) != len(d.Virtual) {
				t.Errorf("VirtualPods holds %d pods, Decide %d", len(held), len(d.Virtual))
			}
			var events []string
			for _, e := range d.Events {
				events = append(events, e.Reason)
			}
			got := want{phase: d.Phase, conditions: d.Conditions, events: events, virtual: len(d.Virtual), requeue: d.RequeueAt, left: d.BookingLeft}
			// Messages naming the solver's reasons are checked apart.
			ignoreSolverMessages := cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Message" }, cmp.Comparer(func(a, b string) bool { return a == "" || b == "" || a == b }))
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{}), cmpopts.EquateEmpty(), ignoreSolverMessages); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
		})
	}
}
