package simapi_test

import (
	"context"
	"fmt"
	"path"
	"sync"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/catalog"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim/simapi"
	"github.com/capstan-dev/capstan/pkg/test"
)

// nodeClasses are SimNodeClasses by name, in memory.
type nodeClasses map[string]*simv1alpha1.SimNodeClass

func (n nodeClasses) SimNodeClass(_ context.Context, name string) (*simv1alpha1.SimNodeClass, error) {
	if nc, ok := n[name]; ok {
		return nc, nil
	}
	return nil, fmt.Errorf("simnodeclass %s not found", name)
}

// The API kubelet registers a launched instance's Node with the real API
// server after the launch latency, and takes it from kwok when it stops.
func TestAPIKubeletAgainstAPIServer(t *testing.T) {
	env := test.EnvironmentFor(t)
	g := test.NewGomega(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	k := &simapi.Kubelet{Client: env.Client, Clock: clock.RealClock{}}
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

	// The Node the cloud builds for a launch reaches the API server with
	// the instance's labels, the zone ID among them. Its first instance
	// takes the name the node above has.
	g.Expect(env.Client.Delete(ctx, got)).To(gomega.Succeed())
	p := &simv1alpha1.CloudProfile{Spec: simv1alpha1.CloudProfileSpec{
		Region: "us-west-2", Zones: []string{"us-west-2a", "us-west-2b"}, Style: simv1alpha1.CloudStyleAWS,
		LaunchLatency: metav1.Duration{Duration: time.Millisecond}, ZoneIDs: map[string]string{"us-west-2b": "usw2-az4"},
	}}
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	classes := nodeClasses{"default": &simv1alpha1.SimNodeClass{}}
	cloud, err := sim.New(sim.Options{Profile: p, Catalog: cat, Clock: clock.RealClock{}, NodeClasses: classes, Kubelet: k})
	if err != nil {
		t.Fatal(err)
	}
	nc, err := cloud.Create(ctx, test.NodeClaim(func(nc *v1.NodeClaim) {
		nc.Name, nc.Labels = "nc", map[string]string{v1.NodePoolLabelKey: "default"}
		nc.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{
			{Key: v1.LabelInstanceType, Operator: corev1.NodeSelectorOpIn, Values: []string{"c5.xlarge"}},
			{Key: v1.LabelZoneID, Operator: corev1.NodeSelectorOpIn, Values: []string{"usw2-az4"}},
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	launched := &corev1.Node{}
	g.Eventually(func() error {
		return env.Client.Get(ctx, client.ObjectKey{Name: sim.NodeName(&sim.Instance{ID: path.Base(nc.Status.ProviderID)})}, launched)
	}).Should(gomega.Succeed())
	if launched.Labels[v1.LabelZoneID] != "usw2-az4" || launched.Labels[v1.LabelZone] != "us-west-2b" {
		t.Errorf("registered node labels %v, want zone us-west-2b, zone id usw2-az4", launched.Labels)
	}
}

// A registration the API server refuses (restarting, say) is tried again
// until it succeeds, as a kubelet keeps trying; one whose instance stops
// meanwhile gives up and never appears.
func TestAPIKubeletRetriesRegistration(t *testing.T) {
	env := test.EnvironmentFor(t)
	g := test.NewGomega(t)
	ctx := context.Background()
	var mu sync.Mutex
	refused := map[string]int{}
	base, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	flaky := interceptor.NewClient(base, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			mu.Lock()
			defer mu.Unlock()
			if refused[obj.GetName()] < 2 {
				refused[obj.GetName()]++
				return apierrors.NewServiceUnavailable("restarting")
			}
			return c.Create(ctx, obj, opts...)
		},
	})
	k := &simapi.Kubelet{Client: flaky, Clock: clock.RealClock{}}
	node := func(name string) *corev1.Node {
		n := &corev1.Node{}
		n.Name = name
		n.Labels = map[string]string{simv1alpha1.LabelKubelet: simv1alpha1.KubeletKwok}
		n.Status.Capacity = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}
		n.Status.Allocatable = n.Status.Capacity
		return n
	}
	k.Launch(ctx, node("sim-retried"), time.Now())
	k.Launch(ctx, node("sim-stopped"), time.Now())
	k.Stop(ctx, "sim-stopped")
	g.Eventually(func(g gomega.Gomega) {
		got := &corev1.Node{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: "sim-retried"}, got)).To(gomega.Succeed())
		g.Expect(got.Status.Capacity.Cpu().String()).To(gomega.Equal("2"))
	}).WithTimeout(15 * time.Second).Should(gomega.Succeed())
	g.Consistently(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Name: "sim-stopped"}, &corev1.Node{}))
	}).WithTimeout(4*time.Second).Should(gomega.BeTrue(), "the stopped instance's node registered")
	mu.Lock()
	defer mu.Unlock()
	if refused["sim-retried"] != 2 {
		t.Errorf("refused %d times, want 2 before the registration", refused["sim-retried"])
	}
}
