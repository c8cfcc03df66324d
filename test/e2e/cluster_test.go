//go:build e2e

package e2e

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	"github.com/capstan-dev/capstan/pkg/test"
)

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// A kwok node runs a Deployment's pods, placed by the real kube-scheduler
// and created by kube-controller-manager.
func TestDeploymentRunsOnKwokNode(t *testing.T) {
	ctx := context.Background()
	g := test.NewGomega(t)
	c := cluster.Client
	ns := test.Namespace(t, c)
	node := test.KwokNode()
	g.Expect(c.Create(ctx, node)).To(gomega.Succeed())
	t.Cleanup(func() { _ = c.Delete(ctx, node) })

	labels := map[string]string{"app": "web"}
	pod := test.Pod(ns)
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](5),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       pod.Spec,
			},
		},
	}
	g.Expect(c.Create(ctx, deploy)).To(gomega.Succeed())

	g.Eventually(func(g gomega.Gomega) {
		pods := &corev1.PodList{}
		g.Expect(c.List(ctx, pods, client.InNamespace(ns))).To(gomega.Succeed())
		g.Expect(pods.Items).To(gomega.HaveLen(5))
		for _, p := range pods.Items {
			g.Expect(p.Spec.NodeName).To(gomega.Equal(node.Name))
			g.Expect(p.Status.Phase).To(gomega.Equal(corev1.PodRunning))
		}
	}).Should(gomega.Succeed())
}

// The second scheduler profile binds pods that name it.
func TestSecondSchedulerBindsItsPods(t *testing.T) {
	ctx := context.Background()
	g := test.NewGomega(t)
	c := cluster.Client
	ns := test.Namespace(t, c)
	node := test.KwokNode()
	g.Expect(c.Create(ctx, node)).To(gomega.Succeed())
	t.Cleanup(func() { _ = c.Delete(ctx, node) })

	pod := test.Pod(ns, func(p *corev1.Pod) {
		p.Spec.SchedulerName = test.SecondSchedulerName
		p.Spec.NodeSelector = map[string]string{corev1.LabelHostname: node.Name}
	})
	g.Expect(c.Create(ctx, pod)).To(gomega.Succeed())
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(gomega.Succeed())
		g.Expect(pod.Spec.NodeName).To(gomega.Equal(node.Name))
		g.Expect(pod.Status.Phase).To(gomega.Equal(corev1.PodRunning))
	}).Should(gomega.Succeed())
}

// kwok manages only nodes carrying the simulated cloud's label, so a test
// can make a node NotReady by taking the label away.
func TestOnlyLabelledNodesAreManaged(t *testing.T) {
	ctx := context.Background()
	g := test.NewGomega(t)
	c := cluster.Client
	managed := test.KwokNode()
	unmanaged := test.KwokNode(func(n *corev1.Node) { delete(n.Labels, simv1alpha1.LabelKubelet) })
	for _, n := range []*corev1.Node{managed, unmanaged} {
		g.Expect(c.Create(ctx, n)).To(gomega.Succeed())
		t.Cleanup(func() { _ = c.Delete(ctx, n) })
	}
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(managed), managed)).To(gomega.Succeed())
		g.Expect(nodeReady(managed)).To(gomega.BeTrue())
	}).Should(gomega.Succeed())
	g.Consistently(func(g gomega.Gomega) {
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(unmanaged), unmanaged)).To(gomega.Succeed())
		g.Expect(nodeReady(unmanaged)).To(gomega.BeFalse())
	}).WithTimeout(3 * time.Second).Should(gomega.Succeed())
}

// A test binary that dies without cleaning up leaves its cluster behind;
// the harness finds and kills every process of it.
func TestNoOrphanSurvivesACrash(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(os.Environ(), crashEnv+"=1")
	out, err := cmd.Output()
	var exitErr *exec.ExitError
	if err == nil || !errors.As(err, &exitErr) || exitErr.ExitCode() != 3 {
		t.Fatalf("crashing child: %v, output %q", err, out)
	}
	root := strings.TrimSpace(string(out))
	if !strings.Contains(root, "capstan-cluster-") {
		t.Fatalf("crashing child printed %q, want its cluster root", out)
	}
	// Pdeathsig takes kube-scheduler, kube-controller-manager and kwok
	// with the child; etcd and kube-apiserver (started by envtest) are
	// left for the reaper.
	left := test.ProcessesOf(root)
	killed, err := test.ReapOrphans()
	if err != nil {
		t.Fatal(err)
	}
	for _, pid := range left {
		// One that exited by itself between the listing and the reaping
		// (a Pdeathsig'd process still on its way out) needed no reaper.
		if !slices.Contains(killed, pid) && syscall.Kill(pid, 0) == nil {
			t.Errorf("process %d of the crashed cluster was not reaped (reaped %v)", pid, killed)
		}
	}
	if pids := test.ProcessesOf(root); len(pids) != 0 {
		t.Errorf("processes %v of the crashed cluster survive", pids)
	}
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		t.Errorf("crashed cluster's directory %s remains (%v)", root, err)
	}
	if len(left) == 0 {
		t.Errorf("the crashed child left no process behind to reap; the test proves nothing")
	}
}
