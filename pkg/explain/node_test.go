package explain_test

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/explain"
	"github.com/capstan-dev/capstan/pkg/provisioning/plan"
)

func TestExplainNode(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	nc := &v1.NodeClaim{}
	nc.Name = "web-abcde"
	nc.Labels = map[string]string{v1.NodePoolLabelKey: "web", v1.LabelInstanceType: "c4.xlarge", v1.CapacityTypeLabelKey: "on-demand", v1.LabelZone: "z1"}
	nc.Annotations = map[string]string{plan.PreferredAnnotationKey: "c4.xlarge/spot", plan.FallbackAnnotationKey: "preferred capacity unavailable: spot/c4.xlarge/z1 InsufficientInstanceCapacity"}
	for _, tc := range []struct {
		conds []string
		want  string
	}{
		{nil, "Launching"},
		{[]string{v1.ConditionTypeLaunched}, "Registering"},
		{[]string{v1.ConditionTypeLaunched, v1.ConditionTypeRegistered}, "Initializing"},
		{[]string{v1.ConditionTypeLaunched, v1.ConditionTypeRegistered, v1.ConditionTypeInitialized}, "Ready"},
	} {
		nc.Status.Conditions = nil
		for _, c := range tc.conds {
			nc.Status.Conditions = append(nc.Status.Conditions, metav1.Condition{Type: c, Status: metav1.ConditionTrue, LastTransitionTime: at})
		}
		got := explain.ForNode(nc)
		if got.Lifecycle != tc.want || len(got.Conditions) != len(tc.conds) {
			t.Errorf("conditions %v: lifecycle %s, want %s", tc.conds, got.Lifecycle, tc.want)
		}
		if got.Preferred != "c4.xlarge/spot" || got.CapacityType != "on-demand" || got.Fallback == "" || got.Disruption == "" {
			t.Errorf("provenance: %+v", got)
		}
	}
	nc.DeletionTimestamp = &at
	if got := explain.ForNode(nc); got.Lifecycle != "Deleting" {
		t.Errorf("lifecycle %s, want Deleting", got.Lifecycle)
	}
}
