package sim_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/catalog"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
	"github.com/capstan-dev/capstan/pkg/test"
)

type nodeClasses map[string]*simv1alpha1.SimNodeClass

func (n nodeClasses) SimNodeClass(_ context.Context, name string) (*simv1alpha1.SimNodeClass, error) {
	if nc, ok := n[name]; ok {
		return nc, nil
	}
	return nil, fmt.Errorf("simnodeclass %s not found", name)
}

type fixture struct {
	cloud   *sim.Cloud
	clock   *clocktesting.FakeClock
	kubelet *sim.MemoryKubelet
	classes nodeClasses
	state   string
	profile *simv1alpha1.CloudProfile
}

func profile(style simv1alpha1.CloudStyle, mods ...func(*simv1alpha1.CloudProfileSpec)) *simv1alpha1.CloudProfile {
	p := &simv1alpha1.CloudProfile{Spec: simv1alpha1.CloudProfileSpec{
		Region: "us-west-2", Zones: []string{"us-west-2a", "us-west-2b"}, Style: style,
		LaunchLatency: metav1.Duration{Duration: 2 * time.Second},
		Reservations: []simv1alpha1.Reservation{
			{ID: "cr-small", InstanceType: "m5.large", Zone: "us-west-2a", Count: 1, Type: simv1alpha1.ReservationTypeTargeted, OwnerID: "111122223333", Tags: map[string]string{"team": "ml"}},
			{ID: "cr-big", InstanceType: "m5.2xlarge", Zone: "us-west-2a", Count: 2, Type: simv1alpha1.ReservationTypeOpen, OwnerID: "111122223333", EndTime: &metav1.Duration{Duration: time.Hour}},
		},
	}}
	for _, m := range mods {
		m(&p.Spec)
	}
	return p
}

func newFixture(t *testing.T, p *simv1alpha1.CloudProfile, classes ...*simv1alpha1.SimNodeClass) *fixture {
	t.Helper()
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{clock: clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), kubelet: sim.NewMemoryKubelet(),
		classes: nodeClasses{}, state: filepath.Join(t.TempDir(), "state.json"), profile: p}
	f.classes["default"] = &simv1alpha1.SimNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default"},
		Spec: simv1alpha1.SimNodeClassSpec{EvictionPolicy: simv1alpha1.EvictionPolicyDeallocate, CapacityReservationSelectorTerms: []simv1alpha1.CapacityReservationSelectorTerm{{Tags: map[string]string{"team": "ml"}}, {ID: "cr-big"}}}}
	for _, c := range classes {
		f.classes[c.Name] = c
	}
	f.cloud, err = sim.New(sim.Options{Profile: p, Catalog: cat, Clock: f.clock, StatePath: f.state, NodeClasses: f.classes, Kubelet: f.kubelet})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func claim(name string, reqs ...v1.NodeSelectorRequirementWithMinValues) *v1.NodeClaim {
	return test.NodeClaim(func(nc *v1.NodeClaim) {
		nc.Name = name
		nc.Spec.Requirements = reqs
		nc.Labels = map[string]string{v1.NodePoolLabelKey: "default"}
	})
}

func in(key string, values ...string) v1.NodeSelectorRequirementWithMinValues {
	return v1.NodeSelectorRequirementWithMinValues{Key: key, Operator: corev1.NodeSelectorOpIn, Values: values}
}
