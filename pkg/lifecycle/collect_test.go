package lifecycle

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

func TestCollect(t *testing.T) {
	now := time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)
	instance := func(id string, age time.Duration) *v1.NodeClaim {
		nc := &v1.NodeClaim{}
		nc.CreationTimestamp = metav1.NewTime(now.Add(-age))
		nc.Status.ProviderID = id
		return nc
	}
	claim := func(name, id string, launched bool) v1.NodeClaim {
		nc := v1.NodeClaim{}
		nc.Name, nc.Status.ProviderID = name, id
		if launched {
			nc.Status.Conditions = []metav1.Condition{{Type: v1.ConditionTypeLaunched, Status: metav1.ConditionTrue}}
		}
		return nc
	}
	deleting := claim("deleting", "sim://a/gone-2", true)
	deleting.DeletionTimestamp = &metav1.Time{Time: now}
	d := Collect(
		[]*v1.NodeClaim{instance("sim://a/owned", time.Hour), instance("sim://a/leaked", 2*time.Minute), instance("sim://a/young", 10*time.Second)},
		[]v1.NodeClaim{claim("owner", "sim://a/owned", true), claim("orphan", "sim://a/gone", true), claim("launching", "", false), deleting},
		now, time.Minute,
	)
	var terminate, del []string
	for _, i := range d.Terminate {
		terminate = append(terminate, i.Status.ProviderID)
	}
	for _, c := range d.Delete {
		del = append(del, c.Name)
	}
	if diff := cmp.Diff([]string{"sim://a/leaked"}, terminate); diff != "" {
		t.Errorf("terminate (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"orphan"}, del); diff != "" {
		t.Errorf("delete (-want +got):\n%s", diff)
	}
}
