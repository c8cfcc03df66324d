package sim_test

import (
	"context"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
	"github.com/capstan-dev/capstan/pkg/test"
)

// The API kubelet registers a launched instance's Node with the real API
// server after the launch latency, and takes it from kwok when it stops.
func TestAPIKubeletAgainstAPIServer(t *testing.T) {
	env, err := test.StartEnvironment()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Error(err)
		}
	})
	g := test.NewGomega(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	k := &sim.APIKubelet{Client: env.Client, Clock: clock.RealClock{}}
	node := &corev1.Node{}
	node.Name = "sim-000000000001"
	node.Labels = map[string]string{simv1alpha1.LabelKubelet: simv1alpha1.KubeletKwok, v1.CapacityTypeLabelKey: v1.CapacityTypeSpot}
	node.Spec.ProviderID = "sim://us-west-2a/i-000000000001"
	node.Spec.Taints = []corev1.Taint{v1.UnregisteredNoExecuteTaint()}
	node.Status.Capacity = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourcePods: resource.MustParse("58")}
	node.Status.Allocatable = node.Status.Capacity
	start := time.Now()
	k.Launch(ctx, node.DeepCopy(), start.Add(500*time.Millisecond))

	got := &corev1.Node{}
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: node.Name}, got)).To(gomega.Succeed())
		g.Expect(got.Status.Capacity.Cpu().String()).To(gomega.Equal("4"))
	}).Should(gomega.Succeed())
	if time.Since(start) < 500*time.Millisecond {
		t.Errorf("node registered before the launch latency")
	}
	unregistered := false
	for _, taint := range got.Spec.Taints {
		unregistered = unregistered || taint.MatchTaint(&node.Spec.Taints[0])
	}
	if got.Spec.ProviderID != node.Spec.ProviderID || !unregistered || got.Labels[v1.CapacityTypeLabelKey] != v1.CapacityTypeSpot {
		t.Errorf("registered node %+v", got)
	}

	k.Stop(ctx, node.Name)
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: node.Name}, got)).To(gomega.Succeed())
	if _, ok := got.Labels[simv1alpha1.LabelKubelet]; ok {
		t.Errorf("a stopped instance's node is still kwok's")
	}
}
