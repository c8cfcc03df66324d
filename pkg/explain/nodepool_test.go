package explain_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/budgets"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/disruption"
	"github.com/capstan-dev/capstan/pkg/explain"
	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/test"
)

func TestExplainNodePool(t *testing.T) {
	np := pool("web", func(np *v1.NodePool) {
		np.Annotations = map[string]string{v1.BudgetTimeZoneAnnotationKey: "Europe/Berlin"}
		np.Spec.Limits = v1.Limits{corev1.ResourceCPU: resource.MustParse("16"), "nodes": resource.MustParse("10")}
		np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "0", Schedule: ptr.To("0 8 * * *"), Duration: &metav1.Duration{Duration: 10 * time.Hour}}}
	})
	claim := func(name, ct string, launched bool) v1.NodeClaim {
		nc := v1.NodeClaim{}
		nc.Name = name
		nc.Labels = map[string]string{v1.NodePoolLabelKey: "web", v1.CapacityTypeLabelKey: ct, v1.LabelInstanceType: "m.xlarge", v1.LabelZone: "zone-a"}
		if launched {
			nc.Status.ProviderID = "sim://" + name
		}
		return nc
	}
	four := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}
	// Nodes a and b registered; b is NotReady, so disrupting.
	dis := &disruption.Input{NodePools: []*v1.NodePool{&np}}
	for _, name := range []string{"a", "b"} {
		nc := claim(name, "spot", true)
		nc.Status.NodeName = name
		ready := corev1.ConditionTrue
		if name == "b" {
			ready = corev1.ConditionFalse
		}
		dis.NodeClaims = append(dis.NodeClaims, &nc)
		dis.Nodes = append(dis.Nodes, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready}}}})
	}
	in := explain.NodePoolInput{
		Disruption:    dis,
		NodePool:      &np,
		Nodes:         []*provisioning.Node{{Name: "a", NodePool: "web", Capacity: four}, {Name: "b", NodePool: "web", Capacity: four}, {Name: "c", NodePool: "other", Capacity: four}},
		NodeClaims:    []v1.NodeClaim{claim("a", "spot", true), claim("b", "on-demand", true), claim("c", "spot", false)},
		InstanceTypes: []*cloudprovider.InstanceType{test.InstanceType(test.InstanceTypeOptions{Name: "m.xlarge", CPU: 4, Memory: 16, Price: 0.25})},
		// 09:00 in Berlin (UTC+1 in winter): the window opened at 08:00.
		Now: time.Date(2026, 1, 5, 8, 0, 0, 0, time.UTC),
	}
	got, err := explain.ForNodePool(in)
	if err != nil {
		t.Fatal(err)
	}
	want := explain.NodePool{
		NodePool: "web",
		Limits:   []explain.Limit{{Resource: "cpu", Used: "8", Limit: "16"}, {Resource: "nodes", Used: "2", Limit: "10"}},
		Nodes:    map[string]int{"spot": 1, "on-demand": 1}, CostPerHour: ptr.To(0.35), TimeZone: "Europe/Berlin",
		Budgets: []budgets.Status{{Nodes: "0", Schedule: "0 8 * * *", Duration: "10h0m0s", Active: true, Change: time.Date(2026, 1, 5, 17, 0, 0, 0, time.UTC)}},
		// The window's budget of 0 holds every reason.
		DisruptionsAllowed: map[string]int{"Empty": 0, "Drifted": 0, "Underutilized": 0}, Disrupting: 1,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// 21:00 in Berlin: no budget in force, every node may go but the one
	// already disrupting.
	later := in
	later.Now = time.Date(2026, 1, 5, 20, 0, 0, 0, time.UTC)
	got, err = explain.ForNodePool(later)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int{"Empty": 1, "Drifted": 1, "Underutilized": 1}, got.DisruptionsAllowed); diff != "" || got.Disrupting != 1 {
		t.Errorf("outside the window, disrupting %d, allowed (-want +got):\n%s", got.Disrupting, diff)
	}
	in.InstanceTypes = nil
	if got, _ := explain.ForNodePool(in); got.CostPerHour != nil || len(got.Unknown) != 1 {
		t.Errorf("without prices: cost %v, unknown %v", got.CostPerHour, got.Unknown)
	}
	in.Disruption = nil
	if got, _ := explain.ForNodePool(in); got.DisruptionsAllowed != nil || len(got.Unknown) != 2 {
		t.Errorf("without the nodes: allowed %v, unknown %v", got.DisruptionsAllowed, got.Unknown)
	}
}
