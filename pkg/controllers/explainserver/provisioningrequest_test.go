package explainserver_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	autoscalingv1 "k8s.io/autoscaler/cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/capstan-dev/capstan/pkg/cloudprovider/fake"
	"github.com/capstan-dev/capstan/pkg/clusterstate"
	"github.com/capstan-dev/capstan/pkg/controllers/explainserver"
	"github.com/capstan-dev/capstan/pkg/explain"
	"github.com/capstan-dev/capstan/pkg/provreq"
	"github.com/capstan-dev/capstan/pkg/test"
)

// A new atomic request of two pods: explain says it is pending, holds
// both as virtual pods and has no NodeClaim yet; a missing request is a
// 404.
func TestServerExplainsAProvisioningRequest(t *testing.T) {
	ctx := context.Background()
	g := test.NewGomega(t)
	c := env.Client
	ns := test.Namespace(t, c)
	tmpl := &corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "worker"}}
	tmpl.Template.Spec.Containers = []corev1.Container{{Name: "w", Image: "w", Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
	}}}
	g.Expect(c.Create(ctx, tmpl)).To(gomega.Succeed())
	pr := &autoscalingv1.ProvisioningRequest{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "job"}}
	pr.Spec.ProvisioningClassName = autoscalingv1.ProvisioningClassBestEffortAtomicScaleUp
	pr.Spec.PodSets = []autoscalingv1.PodSet{{PodTemplateRef: autoscalingv1.Reference{Name: "worker"}, Count: 2}}
	g.Expect(c.Create(ctx, pr)).To(gomega.Succeed())
	// Namespaces outlive envtest's tests: its virtual pods would hold
	// capacity in the other tests' solves.
	t.Cleanup(func() { _ = c.Delete(ctx, pr) })

	cluster := &clusterstate.Cluster{Client: c, Cloud: fake.New(), SchedulerNames: []string{corev1.DefaultSchedulerName}}
	srv := httptest.NewServer(explainserver.New(explainserver.Deps{Reader: c, Cluster: cluster, Clock: clocktesting.NewFakeClock(time.Now())},
		explainserver.Options{SchedulerNames: cluster.SchedulerNames}).Handler())
	defer srv.Close()

	var got explain.ProvisioningRequest
	g.Expect(get(g, srv, explainserver.Path+"provisioningrequest/"+ns+"/job", &got)).To(gomega.Equal(http.StatusOK))
	g.Expect(got.Phase).To(gomega.Equal(provreq.PhasePending))
	g.Expect(got.Pods).To(gomega.Equal(2))
	g.Expect(got.VirtualPods).To(gomega.Equal(2))
	g.Expect(got.NodeClaims).To(gomega.BeEmpty())
	g.Expect(get(g, srv, explainserver.Path+"provisioningrequest/"+ns+"/missing", nil)).To(gomega.Equal(http.StatusNotFound))
}
