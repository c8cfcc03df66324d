package test

import (
	"context"
	"testing"
	"time"

	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// RestartAPIServer really stops kube-apiserver (a watch opened before
// ends), keeps what etcd stored, serves again on the same address with the
// same certificates (the cluster's kubeconfig, which every component uses,
// still works), and the components carry on by themselves: kwok runs a
// Node created after the restart, kube-controller-manager makes a
// Deployment's pod and kube-scheduler binds it.
func TestRestartAPIServerKeepsTheClusterWorking(t *testing.T) {
	ctx := context.Background()
	c, err := StartCluster(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Error(err)
		}
	})
	g := NewGomega(t)
	ns := Namespace(t, c.Client)
	stored := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "stored", Namespace: ns}, Data: map[string]string{"k": "v"}}
	g.Expect(c.Client.Create(ctx, stored)).To(gomega.Succeed())
	watcher, err := client.NewWithWatch(c.Config, client.Options{Scheme: c.Scheme})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	w, err := watcher.Watch(ctx, &corev1.ConfigMapList{}, client.InNamespace(ns))
	g.Expect(err).NotTo(gomega.HaveOccurred())
	defer w.Stop()

	g.Expect(c.RestartAPIServer(ctx)).To(gomega.Succeed())

	// The watch's events before the restart may still be queued; then it
	// must close.
	g.Eventually(func() bool {
		for {
			select {
			case _, open := <-w.ResultChan():
				if !open {
					return true
				}
			default:
				return false
			}
		}
	}).Should(gomega.BeTrue(), "a watch opened before the restart is still open: the API server did not restart")

	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	fresh, err := client.New(cfg, client.Options{Scheme: c.Scheme})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	got := &corev1.ConfigMap{}
	g.Expect(fresh.Get(ctx, client.ObjectKeyFromObject(stored), got)).To(gomega.Succeed())
	g.Expect(got.Data).To(gomega.Equal(stored.Data))

	node := KwokNode()
	g.Expect(c.Client.Create(ctx, node)).To(gomega.Succeed())
	labels := map[string]string{"app": "after-restart"}
	pod := Pod(ns)
	deploy := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "after-restart", Namespace: ns}, Spec: appsv1.DeploymentSpec{
		Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: pod.Spec}}}
	g.Expect(c.Client.Create(ctx, deploy)).To(gomega.Succeed())
	// The components' clients back off while the server is away, up to
	// some seconds, before they watch again.
	g.Eventually(func(g gomega.Gomega) {
		running := RunningPods(c.Client, ns)
		g.Expect(running).To(gomega.HaveLen(1))
		g.Expect(running[0].Spec.NodeName).To(gomega.Equal(node.Name))
	}).WithTimeout(2 * time.Minute).Should(gomega.Succeed())
}
