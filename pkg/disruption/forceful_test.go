package disruption

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// A NodeClaim expires expireAfter after it was created; Never, unset or
// a NodeClaim not created yet (no creation time) never does.
func TestExpiresAt(t *testing.T) {
	cases := []struct {
		name    string
		expire  v1.NillableDuration
		created time.Time
		want    time.Time
		ok      bool
	}{
		{"720h", v1.MustParseNillableDuration("720h"), t0, t0.Add(720 * time.Hour), true},
		{"a short one", v1.MustParseNillableDuration("90m"), t0, t0.Add(90 * time.Minute), true},
		{"0s: at creation", v1.MustParseNillableDuration("0s"), t0, t0, true},
		{"Never", v1.MustParseNillableDuration(v1.Never), t0, time.Time{}, false},
		{"unset", v1.NillableDuration{}, t0, time.Time{}, false},
		{"no creation time", v1.MustParseNillableDuration("720h"), time.Time{}, time.Time{}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			nc := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "nc-a", CreationTimestamp: metav1.NewTime(tc.created)}}
			nc.Spec.ExpireAfter = tc.expire
			got, ok := ExpiresAt(nc)
			if ok != tc.ok || !got.Equal(tc.want) {
				t.Errorf("ExpiresAt = %s, %v; want %s, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

// MarkForceful records why a forceful method deletes a NodeClaim (its
// DisruptionReason condition) and, given a deadline, the instant its
// drain must finish by (the termination-timestamp annotation, in UTC,
// whole seconds); an earlier recorded deadline stands. It reports
// whether it changed anything, so the caller writes only then.
func TestMarkForceful(t *testing.T) {
	now := t0.Add(time.Hour)
	deadline := now.Add(2 * time.Minute)
	rfc := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
	const key = v1.NodeClaimTerminationTimestampAnnotationKey
	reason := func(r v1.DisruptionReason, msg string, at time.Time) metav1.Condition {
		return metav1.Condition{Type: v1.ConditionTypeDisruptionReason, Status: metav1.ConditionTrue, Reason: string(r),
			Message: msg, LastTransitionTime: metav1.NewTime(at)}
	}
	initialized := metav1.Condition{Type: v1.ConditionTypeInitialized, Status: metav1.ConditionTrue, Reason: "Initialized",
		LastTransitionTime: metav1.NewTime(t0)}
	cases := []struct {
		name string
		// annotations and conditions the NodeClaim carries before.
		annotations map[string]string
		conditions  []metav1.Condition
		reason      v1.DisruptionReason
		message     string
		deadline    time.Time
		// wantAnnotations and wantConditions are the NodeClaim's after.
		wantAnnotations map[string]string
		wantConditions  []metav1.Condition
		changed         bool
	}{
		// A fresh NodeClaim gets both.
		{"interrupted with a deadline", nil, nil, v1.DisruptionReasonInterrupted, "SpotInterruption", deadline,
			map[string]string{key: rfc(deadline)},
			[]metav1.Condition{reason(v1.DisruptionReasonInterrupted, "SpotInterruption", now)}, true},
		{"expired: no deadline, no annotation", nil, nil, v1.DisruptionReasonExpired, "expired after 720h", time.Time{},
			nil, []metav1.Condition{reason(v1.DisruptionReasonExpired, "expired after 720h", now)}, true},
		{"other annotations and conditions are kept", map[string]string{"team": "web"}, []metav1.Condition{initialized},
			v1.DisruptionReasonInterrupted, "m", deadline,
			map[string]string{"team": "web", key: rfc(deadline)},
			[]metav1.Condition{initialized, reason(v1.DisruptionReasonInterrupted, "m", now)}, true},
		// The annotation is RFC 3339 in UTC: a deadline in another zone
		// or with a fraction of a second is written as the same instant,
		// truncated to the second.
		{"a deadline in another zone is written in UTC", nil, nil, v1.DisruptionReasonInterrupted, "m",
			deadline.In(time.FixedZone("UTC+9", 9*3600)),
			map[string]string{key: "2026-03-10T13:02:00Z"},
			[]metav1.Condition{reason(v1.DisruptionReasonInterrupted, "m", now)}, true},
		{"a fraction of a second is dropped", nil, nil, v1.DisruptionReasonInterrupted, "m", deadline.Add(700 * time.Millisecond),
			map[string]string{key: "2026-03-10T13:02:00Z"},
			[]metav1.Condition{reason(v1.DisruptionReasonInterrupted, "m", now)}, true},
		// A deadline already recorded is replaced only by an earlier one.
		{"a later recorded deadline is replaced", map[string]string{key: rfc(deadline.Add(time.Hour))},
			[]metav1.Condition{reason(v1.DisruptionReasonInterrupted, "m", t0)}, v1.DisruptionReasonInterrupted, "m", deadline,
			map[string]string{key: rfc(deadline)},
			[]metav1.Condition{reason(v1.DisruptionReasonInterrupted, "m", t0)}, true},
		{"an earlier recorded deadline stands", map[string]string{key: rfc(deadline.Add(-time.Minute))}, nil,
			v1.DisruptionReasonInterrupted, "m", deadline,
			map[string]string{key: rfc(deadline.Add(-time.Minute))},
			[]metav1.Condition{reason(v1.DisruptionReasonInterrupted, "m", now)}, true},
		{"the same deadline, the same reason: nothing to do", map[string]string{key: rfc(deadline)},
			[]metav1.Condition{reason(v1.DisruptionReasonInterrupted, "m", t0)}, v1.DisruptionReasonInterrupted, "m", deadline,
			map[string]string{key: rfc(deadline)},
			[]metav1.Condition{reason(v1.DisruptionReasonInterrupted, "m", t0)}, false},
		{"an earlier recorded deadline, the same reason: nothing to do", map[string]string{key: rfc(deadline.Add(-time.Minute))},
			[]metav1.Condition{reason(v1.DisruptionReasonInterrupted, "m", t0)}, v1.DisruptionReasonInterrupted, "m", deadline,
			map[string]string{key: rfc(deadline.Add(-time.Minute))},
			[]metav1.Condition{reason(v1.DisruptionReasonInterrupted, "m", t0)}, false},
		{"an unparsable recorded deadline is replaced", map[string]string{key: "soon"},
			[]metav1.Condition{reason(v1.DisruptionReasonInterrupted, "m", t0)}, v1.DisruptionReasonInterrupted, "m", deadline,
			map[string]string{key: rfc(deadline)},
			[]metav1.Condition{reason(v1.DisruptionReasonInterrupted, "m", t0)}, true},
		{"no deadline leaves a recorded one alone", map[string]string{key: rfc(deadline)}, nil,
			v1.DisruptionReasonExpired, "m", time.Time{},
			map[string]string{key: rfc(deadline)},
			[]metav1.Condition{reason(v1.DisruptionReasonExpired, "m", now)}, true},
		// The condition: the same reason is kept as it is (its message
		// too); another reason (a graceful method's, or the other
		// forceful one) is replaced, the condition staying True since
		// it was set.
		{"the same reason, another message: kept", nil,
			[]metav1.Condition{reason(v1.DisruptionReasonExpired, "first words", t0)}, v1.DisruptionReasonExpired, "other words", time.Time{},
			nil, []metav1.Condition{reason(v1.DisruptionReasonExpired, "first words", t0)}, false},
		{"a graceful method's reason is replaced", nil,
			[]metav1.Condition{reason(v1.DisruptionReasonDrifted, "drifted", t0)}, v1.DisruptionReasonInterrupted, "SpotInterruption", deadline,
			map[string]string{key: rfc(deadline)},
			[]metav1.Condition{reason(v1.DisruptionReasonInterrupted, "SpotInterruption", t0)}, true},
		{"expired, then interrupted", nil,
			[]metav1.Condition{reason(v1.DisruptionReasonExpired, "expired", t0)}, v1.DisruptionReasonInterrupted, "m", time.Time{},
			nil, []metav1.Condition{reason(v1.DisruptionReasonInterrupted, "m", t0)}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			nc := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "nc-a", Annotations: tc.annotations}}
			nc.Status.Conditions = tc.conditions
			if got := MarkForceful(nc, tc.reason, tc.message, tc.deadline, now); got != tc.changed {
				t.Errorf("changed = %v, want %v", got, tc.changed)
			}
			if diff := cmp.Diff(tc.wantAnnotations, nc.Annotations); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantConditions, nc.Status.Conditions); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
			// The same call again, later: nothing left to change.
			before := nc.DeepCopy()
			if MarkForceful(nc, tc.reason, tc.message, tc.deadline, now.Add(time.Minute)) {
				t.Error("a second identical call reports a change")
			}
			if diff := cmp.Diff(before, nc); diff != "" {
				t.Errorf("a second identical call changed the NodeClaim (-before +after):\n%s", diff)
			}
		})
	}
}
