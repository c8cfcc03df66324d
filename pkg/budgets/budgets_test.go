package budgets

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

func TestEvaluate(t *testing.T) {
	at := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Fatal(err)
	}
	scheduled := func(schedule, duration string) v1.Budget {
		d, err := time.ParseDuration(duration)
		if err != nil {
			t.Fatal(err)
		}
		return v1.Budget{Nodes: "0", Schedule: ptr.To(schedule), Duration: &metav1.Duration{Duration: d}}
	}
	for _, tc := range []struct {
		name   string
		tz     string
		budget v1.Budget
		now    string
		want   Status
	}{
		{"always", "", v1.Budget{Nodes: "10%", Reasons: []v1.DisruptionReason{v1.DisruptionReasonEmpty}}, "2026-03-02T10:00:00Z",
			Status{Nodes: "10%", Reasons: []string{"Empty"}, Active: true}},
		{"business hours, inside", "", scheduled("0 9 * * 1-5", "8h"), "2026-03-02T10:00:00Z",
			Status{Nodes: "0", Schedule: "0 9 * * 1-5", Duration: "8h0m0s", Active: true, Change: at("2026-03-02T17:00:00Z")}},
		{"business hours, at the close", "", scheduled("0 9 * * 1-5", "8h"), "2026-03-02T17:00:00Z",
			Status{Nodes: "0", Schedule: "0 9 * * 1-5", Duration: "8h0m0s", Change: at("2026-03-03T09:00:00Z")}},
		{"friday evening: opens monday", "", scheduled("0 9 * * 1-5", "8h"), "2026-03-06T18:00:00Z",
			Status{Nodes: "0", Schedule: "0 9 * * 1-5", Duration: "8h0m0s", Change: at("2026-03-09T09:00:00Z")}},
		{"in the budget's time zone", "Asia/Tokyo", scheduled("@daily", "1h"), "2026-03-02T15:30:00Z",
			Status{Nodes: "0", Schedule: "@daily", Duration: "1h0m0s", Active: true, Change: at("2026-03-02T16:00:00Z").In(tokyo)}},
		{"overlapping windows chain", "", scheduled("@hourly", "90m"), "2026-03-02T10:15:00Z",
			Status{Nodes: "0", Schedule: "@hourly", Duration: "1h30m0s", Active: true}},
		// The reference counts a schedule that never fires as always in
		// force; it is never in force here, as it never opens a window.
		{"never fires: never in force", "", scheduled("0 0 30 2 *", "24h"), "2026-03-02T10:15:00Z",
			Status{Nodes: "0", Schedule: "0 0 30 2 *", Duration: "24h0m0s"}},
		{"every leap year: in force on 29 February", "", scheduled("0 0 29 2 *", "24h"), "2028-02-29T10:00:00Z",
			Status{Nodes: "0", Schedule: "0 0 29 2 *", Duration: "24h0m0s", Active: true, Change: at("2028-03-01T00:00:00Z")}},
	} {
		np := &v1.NodePool{}
		np.Name = "default"
		if tc.tz != "" {
			np.Annotations = map[string]string{v1.BudgetTimeZoneAnnotationKey: tc.tz}
		}
		np.Spec.Disruption.Budgets = []v1.Budget{tc.budget}
		got, _, err := Evaluate(np, at(tc.now))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if diff := cmp.Diff([]Status{tc.want}, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
	np := &v1.NodePool{}
	np.Annotations = map[string]string{v1.BudgetTimeZoneAnnotationKey: "Mars/Olympus"}
	if _, _, err := Evaluate(np, time.Now()); err == nil {
		t.Error("an unknown time zone is not an error")
	}
}

func TestValidateSchedule(t *testing.T) {
	for _, tc := range []struct {
		schedule string
		// want is a part of the error, "" when valid.
		want string
	}{
		{"0 9 * * 1-5", ""},
		{"@daily", ""},
		{"0 0 29 2 *", ""},
		{"0 0 31 * *", ""},
		// Day-of-month and day-of-week both set: either matches.
		{"0 0 30 2 1", ""},
		{"0 0 30 2 *", "never fires"},
		{"0 0 31 4,6,9,11 *", "never fires"},
		{"0 0 31 2 *", "never fires"},
		{"TZ=UTC 0 9 * * *", "time zone prefix"},
		{"@every 1h", "@every is not allowed"},
		{"0 25 * * *", "not a cron expression"},
	} {
		err := ValidateSchedule(tc.schedule)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%q: %v, want %q", tc.schedule, err, tc.want)
		}
	}
}
