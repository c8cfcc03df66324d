package test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
)

// Timeouts for Eventually in tests against a real control plane: short,
// since every component runs locally and time-compressed.
const (
	EventuallyTimeout = 30 * time.Second
	PollInterval      = 100 * time.Millisecond
)

// NewGomega is Gomega for t with Capstan's Eventually defaults.
func NewGomega(t testing.TB) gomega.Gomega {
	g := gomega.NewWithT(t)
	g.SetDefaultEventuallyTimeout(EventuallyTimeout)
	g.SetDefaultEventuallyPollingInterval(PollInterval)
	g.SetDefaultConsistentlyPollingInterval(PollInterval)
	return g
}

// Namespace creates a namespace for one test and deletes it when the
// test ends.
func Namespace(t testing.TB, c client.Client) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: RandomName("test")}}
	if err := c.Create(context.Background(), ns); err != nil {
		t.Fatalf("creating namespace, %v", err)
	}
	t.Cleanup(func() {
		if err := client.IgnoreNotFound(c.Delete(context.Background(), ns)); err != nil {
			t.Errorf("deleting namespace %s, %v", ns.Name, err)
		}
	})
	return ns.Name
}

// KwokNode is a Node the local cluster's kwok keeps Ready and runs pods
// on, as the simulated cloud's nodes will be.
func KwokNode(mods ...func(*corev1.Node)) *corev1.Node {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("16"),
		corev1.ResourceMemory: resource.MustParse("64Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        RandomName("node"),
			Labels:      map[string]string{simv1alpha1.LabelKubelet: simv1alpha1.KubeletKwok},
			Annotations: map[string]string{"node.alpha.kubernetes.io/ttl": "0"},
		},
		Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
	}
	n.Labels[corev1.LabelHostname] = n.Name
	for _, mod := range mods {
		mod(n)
	}
	return n
}

// Pod is a pod with one container requesting a little CPU and memory.
func Pod(namespace string, mods ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: RandomName("pod"), Namespace: namespace},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name:  "app",
			Image: "registry.k8s.io/pause:3.10",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse("100m"),
				corev1.ResourceMemory: resource.MustParse("64Mi"),
			}},
		}}},
	}
	for _, mod := range mods {
		mod(p)
	}
	return p
}

// RunningPods are the namespace's Running pods that are not terminating.
func RunningPods(c client.Client, namespace string) []corev1.Pod {
	pods := &corev1.PodList{}
	if err := c.List(context.Background(), pods, client.InNamespace(namespace)); err != nil {
		return nil
	}
	return slices.DeleteFunc(pods.Items, func(p corev1.Pod) bool { return p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil })
}

// NodeClaimsOf are the NodePool's NodeClaims (none when listing fails).
func NodeClaimsOf(c client.Client, nodePool string) []v1.NodeClaim {
	list := &v1.NodeClaimList{}
	_ = c.List(context.Background(), list, client.MatchingLabels{v1.NodePoolLabelKey: nodePool})
	return list.Items
}

// NodeClaimNames are the NodeClaims' names, as a set.
func NodeClaimNames(claims []v1.NodeClaim) map[string]bool {
	out := map[string]bool{}
	for _, nc := range claims {
		out[nc.Name] = true
	}
	return out
}

// SetInstanceTypes replaces the NodePool's requirements with one on its
// instance types (narrowing them drifts the nodes of other types) and
// returns it as patched.
func SetInstanceTypes(g gomega.Gomega, c client.Client, np *v1.NodePool, types ...string) *v1.NodePool {
	got := &v1.NodePool{}
	g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(np), got)).To(gomega.Succeed())
	patch := client.MergeFrom(got.DeepCopy())
	got.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{{Key: v1.LabelInstanceType, Operator: corev1.NodeSelectorOpIn, Values: types}}
	g.Expect(c.Patch(context.Background(), got, patch)).To(gomega.Succeed())
	return got
}
