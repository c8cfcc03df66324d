package clusterstate_test

import (
	"context"
	"testing"

	"github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/capstan-dev/capstan/pkg/clusterstate"
	"github.com/capstan-dev/capstan/pkg/gang"
	"github.com/capstan-dev/capstan/pkg/test"
)

// Without the PodGroup APIs there is nothing to read (the test control
// plane serves no Workload API); with scheduler-plugins' CRD installed,
// its PodGroups are listed and declare their gangs' min counts.
func TestPodGroupsWhereServed(t *testing.T) {
	g := test.NewGomega(t)
	ctx := context.Background()
	got, err := clusterstate.PodGroups(ctx, env.Client, env.Client.RESTMapper())
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(got).To(gomega.BeEmpty())

	crd, err := test.ReadManifests("pkg/clusterstate/testdata/scheduler-plugins-podgroup-crd.yaml")
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(crd).To(gomega.HaveLen(1))
	g.Expect(env.Client.Create(ctx, crd[0].Object)).To(gomega.Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(ctx, crd[0].Object) })
	ns := test.Namespace(t, env.Client)
	pg := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"minMember": int64(4)}}}
	pg.SetGroupVersionKind(gang.PluginPodGroup)
	pg.SetNamespace(ns)
	pg.SetName("train")
	g.Eventually(func() error { return env.Client.Create(ctx, pg) }).Should(gomega.Succeed())

	g.Eventually(func(g gomega.Gomega) {
		got, err := clusterstate.PodGroups(ctx, env.Client, env.Client.RESTMapper())
		g.Expect(err).NotTo(gomega.HaveOccurred())
		declared, errs := gang.Declare(got)
		g.Expect(errs).To(gomega.BeEmpty())
		g.Expect(declared).To(gomega.HaveKeyWithValue(gang.PluginKey(ns, "train"), 4))
	}).Should(gomega.Succeed())
}
