package plan

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/scheduling"
	"github.com/capstan-dev/capstan/pkg/test"
)

func TestFlavorOf(t *testing.T) {
	pod := test.Pod("default", func(p *corev1.Pod) {
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
			{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: v1.LabelInstanceGPUName, Operator: corev1.NodeSelectorOpIn, Values: []string{"a100"}}}},
			{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: v1.LabelInstanceGPUName, Operator: corev1.NodeSelectorOpIn, Values: []string{"a10g"}}}},
		}}}}
	})
	c := &provisioning.NodeClaim{Requirements: scheduling.NewRequirements(scheduling.NewRequirement(v1.LabelInstanceGPUName, corev1.NodeSelectorOpIn, "a10g"))}
	if got := flavorOf(c, pod, []string{"a100", "a10g"}); got != "a10g (2 of 2)" {
		t.Errorf("flavorOf = %q", got)
	}
	if got := flavorOf(c, test.Pod("default"), nil); got != "" {
		t.Errorf("a pod without flavors: %q", got)
	}
}

func TestFallbackReason(t *testing.T) {
	it := test.InstanceType(test.InstanceTypeOptions{Name: "c4.xlarge", CPU: 4, Memory: 8})
	clk := clocktesting.NewFakeClock(time.Now())
	u := cloudprovider.NewUnavailableOfferings(clk, 0)
	np := test.NodePool()
	c := &provisioning.NodeClaim{InstanceTypes: []*cloudprovider.InstanceType{it}, CapacityType: v1.CapacityTypeSpot,
		Requirements: scheduling.NewRequirements(scheduling.NewRequirement(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpNotIn, v1.CapacityTypeReserved))}
	if got := fallbackReason(np, c, u); got != "" {
		t.Errorf("spot still available, yet %q", got)
	}
	u.MarkUnavailable(cloudprovider.OfferingKey{CapacityType: v1.CapacityTypeSpot, InstanceType: "c4.xlarge", Zone: "zone-a"}, "InsufficientInstanceCapacity")
	u.MarkUnavailable(cloudprovider.OfferingKey{CapacityType: v1.CapacityTypeSpot, InstanceType: "c4.xlarge", Zone: "zone-b"}, "InsufficientInstanceCapacity")
	c.InstanceTypes, c.CapacityType = u.Apply(c.InstanceTypes), v1.CapacityTypeOnDemand
	if got := fallbackReason(np, c, u); !strings.Contains(got, "spot/c4.xlarge/zone-a InsufficientInstanceCapacity") {
		t.Errorf("fallback %q", got)
	}
	onlyOnDemand := test.NodePool(func(np *v1.NodePool) {
		np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{v1.CapacityTypeOnDemand}}}
	})
	if got := fallbackReason(onlyOnDemand, c, u); got != "" {
		t.Errorf("a NodePool that never wanted spot fell back? %q", got)
	}
}
