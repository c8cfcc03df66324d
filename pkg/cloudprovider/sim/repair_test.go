package sim_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
)

// The profile's repairPolicies, or the kubelet's by default.
func TestRepairPolicies(t *testing.T) {
	f := newFixture(t, profile(simv1alpha1.CloudStyleAWS, func(*simv1alpha1.CloudProfileSpec) {}))
	if diff := cmp.Diff(cloudprovider.KubeletRepairPolicies(30*time.Minute), f.cloud.RepairPolicies()); diff != "" {
		t.Errorf("default policies (-want +got):\n%s", diff)
	}
	f = newFixture(t, profile(simv1alpha1.CloudStyleAWS, func(s *simv1alpha1.CloudProfileSpec) {
		s.RepairPolicies = []simv1alpha1.RepairPolicy{{ConditionType: "NetworkingReady", ConditionStatus: "False", TolerationDuration: metav1.Duration{Duration: time.Minute}}}
	}))
	want := []cloudprovider.RepairPolicy{{ConditionType: "NetworkingReady", ConditionStatus: corev1.ConditionFalse, TolerationDuration: time.Minute}}
	if diff := cmp.Diff(want, f.cloud.RepairPolicies()); diff != "" {
		t.Errorf("the profile's policies (-want +got):\n%s", diff)
	}
}

// KubeletStop stops the first count matching instances' kubelets, without
// a notice, and leaves them running; InstanceStop stops them too.
func TestStopEvents(t *testing.T) {
	for _, tc := range []struct {
		event simv1alpha1.CloudEventType
		state sim.InstanceState
	}{
		{simv1alpha1.EventKubeletStop, sim.InstanceRunning},
		{simv1alpha1.EventInstanceStop, sim.InstanceStopped},
	} {
		t.Run(string(tc.event), func(t *testing.T) {
			f := newFixture(t, profile(simv1alpha1.CloudStyleAWS, func(s *simv1alpha1.CloudProfileSpec) {
				s.Events = []simv1alpha1.CloudEvent{{At: metav1.Duration{Duration: time.Minute}, Type: tc.event, InstanceType: "c5.xlarge", Zone: "*", Count: ptr.To(2)}}
			}))
			ctx := context.Background()
			for _, name := range []string{"nc-1", "nc-2", "nc-3"} {
				if _, err := f.cloud.Create(ctx, claim(name, in(v1.LabelInstanceType, "c5.xlarge"))); err != nil {
					t.Fatal(err)
				}
			}
			f.clock.Step(time.Minute)
			if n, err := f.cloud.Interruptions(ctx); err != nil || len(n) != 0 {
				t.Fatalf("notices %+v (%v), want none", n, err)
			}
			stopped := 0
			for _, inst := range f.cloud.Snapshot().Instances {
				switch {
				case inst.KubeletStopped:
					stopped++
					if inst.State != tc.state || !f.kubelet.Stopped(sim.NodeName(inst)) {
						t.Errorf("stopped instance %s: %s, its kubelet stopped %v; want %s and stopped", inst.ID, inst.State, f.kubelet.Stopped(sim.NodeName(inst)), tc.state)
					}
				case inst.State != sim.InstanceRunning:
					t.Errorf("instance %s %s, want running", inst.ID, inst.State)
				}
			}
			if stopped != 2 {
				t.Errorf("%d instances stopped, want count's 2", stopped)
			}
			if all, _ := f.cloud.List(ctx); len(all) != 3 {
				t.Errorf("%d instances listed, want all 3 (stopped ones too)", len(all))
			}
		})
	}
}
