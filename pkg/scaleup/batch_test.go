package scaleup

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/capstan-dev/capstan/pkg/provisioning"
)

// A batch run through its events: each step either triggers, solves with
// a decision, or asks Due and Next at an offset from t0.
func TestBatch(t *testing.T) {
	w := Window{Idle: time.Second, Max: 10 * time.Second}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	waiting := Decision{Result: provisioning.Result{Unplaced: []provisioning.Unplaced{{Pod: &corev1.Pod{}}}}}
	flavorless := Decision{FlavorFailures: []FlavorFailure{{Pod: &corev1.Pod{}}}}
	launching := Decision{Result: provisioning.Result{NewNodeClaims: []*provisioning.NodeClaim{{}}}}
	type step struct {
		at        time.Duration
		trigger   bool
		immediate bool
		solved    *Decision
		// asked: Due's answer, then Next's.
		due  bool
		wait time.Duration
		next time.Duration // from t0; -1: none
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"nothing open", []step{{at: 0, next: -1}}},
		{"idle window closes the batch", []step{
			{at: 0, trigger: true},
			{at: 500 * time.Millisecond, wait: 500 * time.Millisecond, next: time.Second},
			{at: time.Second, due: true, next: -1},
			{at: 2 * time.Second, next: -1},
		}},
		{"events keep it open until the max window", []step{
			{at: 0, trigger: true},
			{at: 900 * time.Millisecond, trigger: true},
			{at: 1800 * time.Millisecond, trigger: true},
			{at: 2700 * time.Millisecond, trigger: true},
			{at: 3600 * time.Millisecond, trigger: true},
			{at: 4500 * time.Millisecond, trigger: true},
			{at: 5400 * time.Millisecond, trigger: true},
			{at: 6300 * time.Millisecond, trigger: true},
			{at: 7200 * time.Millisecond, trigger: true},
			{at: 8100 * time.Millisecond, trigger: true},
			{at: 9000 * time.Millisecond, trigger: true},
			{at: 9500 * time.Millisecond, wait: 500 * time.Millisecond, next: 10 * time.Second},
			{at: 10 * time.Second, due: true, next: -1},
		}},
		{"an immediate trigger is due at once", []step{
			{at: 0, trigger: true, immediate: true},
			{at: 0, due: true, next: -1},
		}},
		{"pods left waiting are re-checked a max window later", []step{
			{at: 0, trigger: true},
			{at: time.Second, due: true, next: -1},
			{at: time.Second, solved: &waiting},
			{at: 5 * time.Second, wait: 6 * time.Second, next: 11 * time.Second},
			{at: 11 * time.Second, due: true, next: -1},
			{at: 12 * time.Second, next: -1},
		}},
		{"pods without their flavors are re-checked too", []step{
			{at: 0, solved: &flavorless},
			{at: 10 * time.Second, due: true, next: -1},
		}},
		{"pods planned onto new NodeClaims are re-checked too", []step{
			{at: 0, solved: &launching},
			{at: 10 * time.Second, due: true, next: -1},
		}},
		{"a decision leaving nothing waiting needs no re-check", []step{
			{at: 0, solved: &Decision{}},
			{at: 10 * time.Second, next: -1},
		}},
		{"an event before the re-check batches as usual", []step{
			{at: 0, solved: &waiting},
			{at: 3 * time.Second, trigger: true},
			{at: 3500 * time.Millisecond, wait: 500 * time.Millisecond, next: 4 * time.Second},
			{at: 4 * time.Second, due: true, next: -1},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b Batch
			for i, s := range tc.steps {
				now := t0.Add(s.at)
				switch {
				case s.trigger:
					b.Trigger(now, s.immediate)
					continue
				case s.solved != nil:
					b.Solved(*s.solved, w, now)
					continue
				}
				due, wait := b.Due(w, now)
				next, ok := b.Next(w, now)
				got := step{at: s.at, due: due, wait: wait, next: -1}
				if ok {
					got.next = next.Sub(t0)
				}
				if diff := cmp.Diff(s, got, cmp.AllowUnexported(step{})); diff != "" {
					t.Errorf("step %d (-want +got):\n%s", i, diff)
				}
			}
		})
	}
}
