package drain

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

var start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func pod(name string, mods ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}}
	for _, m := range mods {
		m(p)
	}
	return p
}

func doNotDisrupt(p *corev1.Pod) {
	p.Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: "true"}
}
func doNotDisruptFor(value string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: value}
		p.Status.StartTime = &metav1.Time{Time: start}
	}
}
func grace(s int64) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = ptr.To(s) }
}
func daemon(p *corev1.Pod) {
	p.OwnerReferences = []metav1.OwnerReference{{Kind: "DaemonSet", Controller: ptr.To(true)}}
}

func critical(class string) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Spec.PriorityClassName = class }
}

type summary struct {
	Evict   []string
	Delete  map[string]int64
	Drained bool
	Requeue time.Duration
}

func summarize(p Plan) summary {
	s := summary{Delete: map[string]int64{}, Drained: p.Drained, Requeue: p.RequeueAfter}
	for _, e := range p.Evict {
		s.Evict = append(s.Evict, e.Name)
	}
	for _, d := range p.Delete {
		s.Delete[d.Pod.Name] = d.GracePeriod
	}
	return s
}

func TestPlanDrain(t *testing.T) {
	hour := start.Add(time.Hour)
	for _, tc := range []struct {
		name     string
		pods     []*corev1.Pod
		now      time.Time
		deadline time.Time
		want     summary
	}{
		{"nothing to drain", nil, start, time.Time{}, summary{Drained: true}},
		{"workloads first, daemonsets wait", []*corev1.Pod{pod("web"), pod("logs", daemon)}, start, time.Time{},
			summary{Evict: []string{"web"}}},
		{"daemonsets last", []*corev1.Pod{pod("logs", daemon)}, start, time.Time{}, summary{Evict: []string{"logs"}}},
		// terminator.go groupPodsByPriority: non-critical pods, then
		// non-critical DaemonSet pods, then critical pods, then critical
		// DaemonSet pods, each wave once the one before has gone.
		{"critical pods wait for the others", []*corev1.Pod{pod("web"), pod("dns", critical("system-cluster-critical")),
			pod("logs", daemon), pod("cni", daemon, critical("system-node-critical"))}, start, time.Time{},
			summary{Evict: []string{"web"}}},
		{"critical pods wait for non-critical daemonsets", []*corev1.Pod{pod("dns", critical("system-cluster-critical")),
			pod("logs", daemon), pod("cni", daemon, critical("system-node-critical"))}, start, time.Time{},
			summary{Evict: []string{"logs"}}},
		{"critical pods before critical daemonsets", []*corev1.Pod{pod("dns", critical("system-cluster-critical")),
			pod("proxy", critical("system-node-critical")), pod("cni", daemon, critical("system-node-critical"))}, start, time.Time{},
			summary{Evict: []string{"dns", "proxy"}}},
		{"critical daemonsets last", []*corev1.Pod{pod("cni", daemon, critical("system-node-critical"))}, start, time.Time{},
			summary{Evict: []string{"cni"}}},
		{"other priority classes are not critical", []*corev1.Pod{pod("web", critical("high")), pod("logs", daemon)}, start, time.Time{},
			summary{Evict: []string{"web"}}},
		{"left alone: mirror, finished, tolerating the disrupted taint", []*corev1.Pod{
			pod("static", func(p *corev1.Pod) { p.Annotations = map[string]string{mirrorPodAnnotation: "x"} }),
			pod("done", func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }),
			pod("tolerant", func(p *corev1.Pod) {
				p.Spec.Tolerations = []corev1.Toleration{{Key: v1.DisruptedTaintKey, Operator: corev1.TolerationOpExists}}
			}),
		}, start, time.Time{}, summary{Drained: true}},
		{"do-not-disrupt without a deadline blocks", []*corev1.Pod{pod("batch", doNotDisrupt)}, start, time.Time{}, summary{}},
		// Seed 004: TGP 1h; a do-not-disrupt pod with a 300s grace period
		// is deleted at 55 minutes, so its grace period ends at the hour.
		{"seed 004: before 55 minutes the do-not-disrupt pod waits", []*corev1.Pod{pod("batch", doNotDisrupt, grace(300))}, start.Add(54 * time.Minute), hour,
			summary{Requeue: time.Minute}},
		{"seed 004: at 55 minutes it is deleted with its full grace period", []*corev1.Pod{pod("batch", doNotDisrupt, grace(300))}, start.Add(55 * time.Minute), hour,
			summary{Delete: map[string]int64{"batch": 300}}},
		// designs/do-not-disrupt-grace-period.md: held from the pod's start
		// time for the duration, then evictable.
		{"a do-not-disrupt duration holds the pod until it ends", []*corev1.Pod{pod("batch", doNotDisruptFor("30m"))}, start.Add(10 * time.Minute), time.Time{},
			summary{Requeue: 20 * time.Minute}},
		{"then it is evicted", []*corev1.Pod{pod("batch", doNotDisruptFor("30m"))}, start.Add(30 * time.Minute), time.Time{},
			summary{Evict: []string{"batch"}}},
		{"at the deadline everything left is forced", []*corev1.Pod{pod("web"), pod("batch", doNotDisrupt)}, hour, hour,
			summary{Delete: map[string]int64{"web": 0, "batch": 0}}},
		{"with a deadline, evictable pods are evicted and the next deletion is scheduled", []*corev1.Pod{pod("web", grace(30))}, start, hour,
			summary{Evict: []string{"web"}, Requeue: time.Hour - 30*time.Second}},
		// Evictions a PDB refuses are retried until the pod's grace period
		// must start: then it is deleted, PDB or not.
		{"a pod its PDB protects is deleted once its grace period must start", []*corev1.Pod{pod("guarded", grace(60))}, start.Add(59 * time.Minute), hour,
			summary{Delete: map[string]int64{"guarded": 60}}},
		{"pods already terminating are waited for", []*corev1.Pod{pod("leaving", func(p *corev1.Pod) { now := metav1.Now(); p.DeletionTimestamp = &now })}, start, time.Time{},
			summary{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := summarize(PlanDrain(tc.pods, tc.now, tc.deadline))
			if tc.want.Delete == nil {
				tc.want.Delete = map[string]int64{}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("PlanDrain (-want +got):\n%s", diff)
			}
		})
	}
}

// Interruption notices (decision 18): the node must be empty by the
// notice's deadline, whatever the style's notice length. Pods whose grace
// period would outlast it are deleted at once with what is left of it;
// the others are evicted and their own grace period ends in time;
// DaemonSet pods wait until the workloads are gone.
func TestPlanDrainInterruptionDeadlines(t *testing.T) {
	for _, tc := range []struct {
		style  string
		notice time.Duration
		want   summary
	}{
		{"aws spot (2 min)", 2 * time.Minute, summary{Evict: []string{"web"}, Delete: map[string]int64{"db": 120}, Requeue: 90 * time.Second}},
		{"gcp preemption (30 s)", 30 * time.Second, summary{Delete: map[string]int64{"web": 30, "db": 30}}},
		{"azure eviction (30 s)", 30 * time.Second, summary{Delete: map[string]int64{"web": 30, "db": 30}}},
		{"gcp preemption, 10 s left", 10 * time.Second, summary{Delete: map[string]int64{"web": 10, "db": 10}}},
	} {
		t.Run(tc.style, func(t *testing.T) {
			pods := []*corev1.Pod{pod("web", grace(30)), pod("db", grace(600)), pod("logs", daemon, grace(30))}
			got := summarize(PlanDrain(pods, start, start.Add(tc.notice)))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("PlanDrain (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("daemonsets last, shortened to what is left", func(t *testing.T) {
		pods := []*corev1.Pod{pod("logs", daemon, grace(30))}
		got := summarize(PlanDrain(pods, start.Add(100*time.Second), start.Add(2*time.Minute)))
		want := summary{Delete: map[string]int64{"logs": 20}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("PlanDrain (-want +got):\n%s", diff)
		}
	})
}

func TestDeadline(t *testing.T) {
	deleted := metav1.NewTime(start)
	claim := func(tgp *time.Duration, annotation string) *v1.NodeClaim {
		nc := &v1.NodeClaim{}
		nc.DeletionTimestamp = &deleted
		if tgp != nil {
			nc.Spec.TerminationGracePeriod = &metav1.Duration{Duration: *tgp}
		}
		if annotation != "" {
			nc.Annotations = map[string]string{v1.NodeClaimTerminationTimestampAnnotationKey: annotation}
		}
		return nc
	}
	hour := time.Hour
	for _, tc := range []struct {
		name string
		nc   *v1.NodeClaim
		want time.Time
	}{
		{"not deleted", &v1.NodeClaim{}, time.Time{}},
		{"neither", claim(nil, ""), time.Time{}},
		{"terminationGracePeriod", claim(&hour, ""), start.Add(time.Hour)},
		{"a notice's deadline alone", claim(nil, start.Add(2*time.Minute).Format(time.RFC3339)), start.Add(2 * time.Minute)},
		{"the notice comes first", claim(&hour, start.Add(2*time.Minute).Format(time.RFC3339)), start.Add(2 * time.Minute)},
		{"the grace period comes first", claim(&hour, start.Add(2*time.Hour).Format(time.RFC3339)), start.Add(time.Hour)},
		{"an unparsable annotation is ignored", claim(&hour, "soon"), start.Add(time.Hour)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Deadline(tc.nc); !got.Equal(tc.want) {
				t.Errorf("Deadline = %s, want %s", got, tc.want)
			}
		})
	}
}
