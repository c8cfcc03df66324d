package sim_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/test"
	"github.com/capstan-dev/capstan/pkg/test/conformance"
)

// The simulated cloud meets the CloudProvider contract.
func TestConformance(t *testing.T) {
	types := []string{"m5.large", "m5.xlarge", "c5.large", "c5.xlarge", "m5.2xlarge"}
	conformance.Run(t, func(t *testing.T, soldOut ...string) conformance.Env {
		p := profile(simv1alpha1.CloudStyleAWS)
		for _, ct := range soldOut {
			for _, it := range types {
				for _, z := range p.Spec.Zones {
					p.Spec.Capacity = append(p.Spec.Capacity, simv1alpha1.CapacityPool{InstanceType: it, Zone: z, CapacityType: ct, Count: 0})
				}
			}
		}
		class := test.SimNodeClass(func(nc *simv1alpha1.SimNodeClass) { nc.Name = "conformance" })
		f := newFixture(t, p, class)
		np := test.NodePool(func(np *v1.NodePool) {
			np.Name = "conformance"
			np.Spec.Template.Spec.NodeClassRef = &v1.NodeClassReference{Group: simv1alpha1.Group, Kind: simv1alpha1.SimNodeClassKind, Name: class.Name}
			np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{{Key: v1.LabelInstanceType, Operator: corev1.NodeSelectorOpIn, Values: types}}
		})
		return conformance.Env{Provider: f.cloud, NodePool: np, Settle: func(*testing.T) { f.clock.Step(time.Minute) }}
	})
}
