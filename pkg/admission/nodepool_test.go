package admission

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/test"
)

func withBudgets(schedules ...string) func(*v1.NodePool) {
	return func(np *v1.NodePool) {
		for _, s := range schedules {
			np.Spec.Disruption.Budgets = append(np.Spec.Disruption.Budgets,
				v1.Budget{Nodes: "1", Schedule: ptr.To(s), Duration: &metav1.Duration{Duration: time.Hour}})
		}
	}
}

func withAnnotations(kv ...string) func(*v1.NodePool) {
	return func(np *v1.NodePool) {
		np.Annotations = map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			np.Annotations[kv[i]] = kv[i+1]
		}
	}
}

// messages are errs as they print, nil for none.
func messages(errs field.ErrorList) []string {
	var out []string
	for _, err := range errs {
		out = append(out, err.Error())
	}
	return out
}

func withTimeZone(tz string) func(*v1.NodePool) {
	return withAnnotations(v1.BudgetTimeZoneAnnotationKey, tz)
}

func TestValidationSucceeded(t *testing.T) {
	cases := []struct {
		name     string
		np       *v1.NodePool
		reason   string   // "" means True
		messages []string // substrings of the message
	}{
		{name: "no budgets", np: test.NodePool()},
		{name: "a budget without a schedule", np: test.NodePool(func(np *v1.NodePool) {
			np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "10%"}}
		})},
		{name: "cron and descriptors", np: test.NodePool(withBudgets("0 9 * * 1-5", "*/15 * * * *", "@daily", "@midnight", "@hourly", "@weekly", "@monthly", "@yearly", "@annually"))},
		{name: "a time zone", np: test.NodePool(withTimeZone("Asia/Tokyo"), withBudgets("0 9 * * *"))},
		{name: "UTC", np: test.NodePool(withTimeZone("UTC"))},
		{name: "an empty time zone is the default", np: test.NodePool(withTimeZone(""))},
		{name: "minute out of range", np: test.NodePool(withBudgets("@daily", "61 * * * *")),
			reason: ReasonInvalidBudgetSchedule, messages: []string{`budgets[1].schedule "61 * * * *"`, "above maximum"}},
		{name: "six fields", np: test.NodePool(withBudgets("0 0 9 * * *")),
			reason: ReasonInvalidBudgetSchedule, messages: []string{`budgets[0].schedule "0 0 9 * * *"`}},
		{name: "unknown descriptor", np: test.NodePool(withBudgets("@fortnightly")),
			reason: ReasonInvalidBudgetSchedule, messages: []string{"@fortnightly"}},
		{name: "@every", np: test.NodePool(withBudgets("@every 1h")),
			reason: ReasonInvalidBudgetSchedule, messages: []string{"@every is not allowed"}},
		{name: "a zone prefix", np: test.NodePool(withBudgets("CRON_TZ=Asia/Tokyo 0 9 * * *")),
			reason: ReasonInvalidBudgetSchedule, messages: []string{v1.BudgetTimeZoneAnnotationKey}},
		{name: "unknown time zone", np: test.NodePool(withTimeZone("Mars/Olympus_Mons")),
			reason: ReasonInvalidBudgetTimeZone, messages: []string{`"Mars/Olympus_Mons" is not an IANA time zone`}},
		{name: "Local", np: test.NodePool(withTimeZone("Local")),
			reason: ReasonInvalidBudgetTimeZone, messages: []string{`"Local"`}},
		{name: "a consolidation threshold", np: test.NodePool(withAnnotations(v1.ConsolidationThresholdAnnotationKey, "0.25"))},
		{name: "a consolidation threshold that is not a number", np: test.NodePool(withAnnotations(v1.ConsolidationThresholdAnnotationKey, "50%")),
			reason: ReasonInvalidConsolidationThreshold, messages: []string{v1.ConsolidationThresholdAnnotationKey, `"50%" is not a positive decimal number`}},
		{name: "a consolidation threshold of 0", np: test.NodePool(withAnnotations(v1.ConsolidationThresholdAnnotationKey, "0")),
			reason: ReasonInvalidConsolidationThreshold, messages: []string{`"0" is not a positive decimal number`}},
		{name: "a repair budget that is no count", np: test.NodePool(withAnnotations(v1.RepairBudgetAnnotationKey, "one")),
			reason: ReasonInvalidRepairBudget, messages: []string{v1.RepairBudgetAnnotationKey, `"one"`}},
		{name: "both wrong: the zone's reason, both messages", np: test.NodePool(withTimeZone("Nowhere"), withBudgets("bad bad bad bad bad")),
			reason: ReasonInvalidBudgetTimeZone, messages: []string{"Nowhere", "budgets[0]"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := ValidationSucceeded(tc.np)
			if got.Type != v1.ConditionTypeValidationSucceeded {
				t.Errorf("type %s", got.Type)
			}
			if tc.reason == "" {
				if got.Status != metav1.ConditionTrue || got.Reason != v1.ConditionTypeValidationSucceeded || got.Message != "" {
					t.Errorf("condition %+v, want True", got)
				}
				return
			}
			if got.Status != metav1.ConditionFalse || got.Reason != tc.reason {
				t.Errorf("condition %s/%s, want False/%s", got.Status, got.Reason, tc.reason)
			}
			for _, m := range tc.messages {
				if !strings.Contains(got.Message, m) {
					t.Errorf("message %q does not contain %q", got.Message, m)
				}
			}
		})
	}
}

// Each problem is at its field path: the annotation's key, or the
// budget's schedule.
func TestNodePoolFieldPaths(t *testing.T) {
	annotation := func(key string) string { return field.NewPath("metadata", "annotations").Key(key).String() }
	cases := []struct {
		name string
		np   *v1.NodePool
		want []string
	}{
		{"valid", test.NodePool(withAnnotations(v1.RebalanceAnnotationKey, v1.RebalanceReplace, v1.ReturnToPreferredAnnotationKey, v1.ReturnToPreferredDisabled), withBudgets("@daily")), nil},
		{"every problem at once", test.NodePool(withAnnotations(
			v1.BudgetTimeZoneAnnotationKey, "Mars/Base",
			v1.ReturnToPreferredAnnotationKey, "enabled",
			v1.RebalanceAnnotationKey, "Replace"), withBudgets("@daily", "61 * * * *")), []string{
			annotation(v1.BudgetTimeZoneAnnotationKey) + `: Invalid value: "Mars/Base" is not an IANA time zone name such as Europe/Berlin, unknown time zone Mars/Base`,
			annotation(v1.ReturnToPreferredAnnotationKey) + `: Invalid value: "enabled" is not "Enabled" or "Disabled"`,
			annotation(v1.RebalanceAnnotationKey) + `: Invalid value: "Replace" is not "replace" or "event"`,
			`spec.disruption.budgets[1].schedule: Invalid value: "61 * * * *": not a cron expression, end of range (61) above maximum (59): 61`,
		}},
		// docs/disruption.md, "Node repair": counts or percentages.
		{"valid repair budget", test.NodePool(withAnnotations(v1.RepairBudgetAnnotationKey, "1", v1.RepairMaxUnhealthyAnnotationKey, "60%")), nil},
		{"repair budget", test.NodePool(withAnnotations(v1.RepairBudgetAnnotationKey, "20 %")), []string{
			annotation(v1.RepairBudgetAnnotationKey) + `: Invalid value: "20 %" is not a count or a percentage ("20%")`,
		}},
		{"repair max unhealthy", test.NodePool(withAnnotations(v1.RepairMaxUnhealthyAnnotationKey, "all")), []string{
			annotation(v1.RepairMaxUnhealthyAnnotationKey) + `: Invalid value: "all" is not a count or a percentage ("20%")`,
		}},
		{"return-to-preferred-after", test.NodePool(withAnnotations(v1.ReturnToPreferredAfterAnnotationKey, "-5m")), []string{
			annotation(v1.ReturnToPreferredAfterAnnotationKey) + `: Invalid value: "-5m" is not a positive duration`,
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, messages(NodePool(tc.np))); diff != "" {
				t.Errorf("NodePool (-want +got):\n%s", diff)
			}
		})
	}
}
