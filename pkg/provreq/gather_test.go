package provreq

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	autoscalingv1 "k8s.io/autoscaler/cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/effects"
	"github.com/capstan-dev/capstan/pkg/gang"
	"github.com/capstan-dev/capstan/pkg/state"
)

func TestRequestsPairsEachRequestWithItsObjects(t *testing.T) {
	pr := *request(atomic, 2)
	other := *request(atomic, 1)
	other.Namespace = "elsewhere"
	tmpl := *template("1")
	done := *consumer("done", "node-a")
	done.Status.Phase = corev1.PodSucceeded
	deprecated := *consumer("old", "")
	deprecated.Annotations = map[string]string{deprecatedConsumeAnnotation: "job"}
	objs := Objects{
		Requests:   []autoscalingv1.ProvisioningRequest{pr, other},
		Templates:  []corev1.PodTemplate{tmpl},
		Pods:       []corev1.Pod{*consumer("w-0", "node-a"), done, deprecated, {ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "unrelated"}}},
		NodeClaims: []v1.NodeClaim{*claim("a", "1"), {ObjectMeta: metav1.ObjectMeta{Name: "plain"}}},
	}
	got := Requests(objs)
	summary := func(r Request) []string {
		out := []string{r.Object.Namespace}
		for name := range r.Templates {
			out = append(out, "template "+name)
		}
		for _, p := range r.Consumers {
			out = append(out, "consumer "+p.Name)
		}
		for _, c := range r.Claims {
			out = append(out, "claim "+c.Name)
		}
		return out
	}
	want := [][]string{{"ns", "template workers", "consumer w-0", "consumer old", "claim a"}, {"elsewhere"}}
	if diff := cmp.Diff(want, [][]string{summary(got[0]), summary(got[1])}); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestPodsOfExpandsEveryPodSet(t *testing.T) {
	pr := request(atomic, 2)
	pr.Spec.PodSets = append(pr.Spec.PodSets, autoscalingv1.PodSet{PodTemplateRef: autoscalingv1.Reference{Name: "workers"}, Count: 1})
	pods, err := PodsOf(pr, map[string]*corev1.PodTemplate{"workers": template("1")})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range pods {
		got = append(got, strings.Join([]string{p.Namespace + "/" + p.Name, string(p.UID), p.Annotations[state.VirtualPodAnnotationKey],
			p.Annotations[gang.AtomicGroupAnnotationKey], p.Annotations[autoscalingv1.ProvisioningRequestPodAnnotationKey],
			p.Annotations[autoscalingv1.ProvisioningClassPodAnnotationKey]}, " "))
	}
	const rest = " ProvisioningRequest/ns/job ProvisioningRequest/ns/job job " + atomic
	want := []string{
		"ns/job-virtual-0 virtual/ProvisioningRequest/ns/job/0" + rest,
		"ns/job-virtual-1 virtual/ProvisioningRequest/ns/job/1" + rest,
		"ns/job-virtual-2 virtual/ProvisioningRequest/ns/job/2" + rest,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pods (-want +got):\n%s", diff)
	}
}

func TestEffects(t *testing.T) {
	pr := request(check, 1)
	d := Decide(Request{Object: pr, Templates: map[string]*corev1.PodTemplate{"workers": template("1")}}, snapshot(), Options{}, t0.Add(3*time.Second))
	ref := effects.Ref{Kind: effects.KindProvisioningRequest, Namespace: "ns", Name: "job"}
	at := t0.Add(3 * time.Second)
	want := []effects.Effect{
		effects.SetCondition{Object: ref, Condition: cond(autoscalingv1.Accepted, metav1.ConditionTrue, ReasonAccepted, MessageAccepted, at)},
		effects.SetCondition{Object: ref, Condition: cond(autoscalingv1.Provisioned, metav1.ConditionTrue, ReasonCapacityIsFound, MessageCapacityIsFound, at)},
		effects.Event{Object: ref, Type: corev1.EventTypeNormal, Reason: "ProvisioningRequestProvisioned", Message: MessageCapacityIsFound},
		effects.Observe{Name: MetricProvisionedSeconds, Value: 3},
	}
	if diff := cmp.Diff(want, d.Effects(pr)); diff != "" {
		t.Errorf("effects (-want +got):\n%s", diff)
	}
}
