package apply

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/capstan-dev/capstan/pkg/effects"
	"github.com/capstan-dev/capstan/pkg/test"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// What the simulator's applier has no counterpart for (the comparison
// test in pkg/simulator covers the rest): metrics, the earliest requeue,
// triggers, and evictions a disruption budget refuses, which are reported
// after the others are done.
func TestApply(t *testing.T) {
	ctx := context.Background()
	ns := test.Namespace(t, env.Client)
	for _, name := range []string{"guarded", "free"} {
		p := test.Pod(ns, func(p *corev1.Pod) {
			p.Name = name
			p.Labels = map[string]string{"app": name}
		})
		if err := env.Client.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
		// A pending pod is evicted whatever its budget says.
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		if err := env.Client.Status().Update(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "guard", Namespace: ns},
		Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &intstr.IntOrString{IntVal: 0}, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "guarded"}}}}
	if err := env.Client.Create(ctx, pdb); err != nil {
		t.Fatal(err)
	}
	// No disruption controller runs here: the budget's status is set as
	// it would be.
	pdb.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: pdb.Generation, ExpectedPods: 1, CurrentHealthy: 1, DesiredHealthy: 1}
	if err := env.Client.Status().Update(ctx, pdb); err != nil {
		t.Fatal(err)
	}
	counters := NewCounters()
	vec := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "capstan_test_total"}, []string{"reason"})
	counters.Add("capstan_test_total", vec)
	var triggers []effects.TriggerSolve
	recorder := events.NewFakeRecorder(10)
	a := New(Deps{Client: env.Client, Recorder: recorder, Counters: counters, Clock: clocktesting.NewFakeClock(t0),
		Trigger: func(e effects.TriggerSolve) { triggers = append(triggers, e) }})
	requeue, err := a.Apply(ctx, []effects.Effect{
		effects.Metric{Name: "capstan_test_total", Labels: []string{"Empty"}, Value: 2},
		effects.RequeueAt{At: t0.Add(time.Minute)},
		effects.RequeueAt{At: t0.Add(10 * time.Second)},
		effects.TriggerSolve{Immediate: true},
		effects.EvictPod{Namespace: ns, Name: "guarded"},
		effects.EvictPod{Namespace: ns, Name: "free"},
		effects.Event{Object: effects.PodRef(ns, "free"), Type: corev1.EventTypeNormal, Reason: "Evicted", Action: "Evict", Message: "evicted"},
	})
	var refused *effects.RefusedEvictions
	if !errors.As(err, &refused) || !cmp.Equal(refused.Pods, []string{ns + "/guarded"}) {
		t.Errorf("error %v, want the guarded pod's eviction refused", err)
	}
	if requeue != 10*time.Second {
		t.Errorf("requeue after %s, want the earliest, 10s", requeue)
	}
	m := &dto.Metric{}
	if err := vec.WithLabelValues("Empty").Write(m); err != nil || m.GetCounter().GetValue() != 2 {
		t.Errorf("counter %v (%v), want 2", m.GetCounter().GetValue(), err)
	}
	if diff := cmp.Diff([]effects.TriggerSolve{{Immediate: true}}, triggers); diff != "" {
		t.Errorf("triggers (-want +got):\n%s", diff)
	}
	if e := <-recorder.Events; !strings.Contains(e, "Evicted") {
		t.Errorf("event %q", e)
	}
	if _, err := a.Apply(ctx, []effects.Effect{effects.Metric{Name: "capstan_unknown_total"}}); err == nil {
		t.Error("a metric no controller registered is applied without error")
	}
}
