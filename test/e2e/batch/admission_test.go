//go:build e2e

package batch

import (
	"context"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/test"
	"github.com/capstan-dev/capstan/test/invariants"
)

// workers is testdata/job.yaml's parallelism: each worker needs a node of
// its own (3 of a 4-vCPU node's CPUs).
const workers = 8

// TestKueueAdmitsAJobOnceAllItsNodesLaunched: Kueue reserves quota for
// the Job, asks for capacity with a best-effort-atomic ProvisioningRequest
// and admits the Job only once Capstan has launched a node for every
// worker; the workers then run on exactly those nodes, consuming the
// request.
func TestKueueAdmitsAJobOnceAllItsNodesLaunched(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := test.NewGomega(t)
	c := cluster.Client
	s := newScenario(t, in(v1.LabelInstanceType, "m5.xlarge"))
	job := s.job(g)
	g.Expect(c.Create(ctx, job)).To(gomega.Succeed())
	g.Expect(job.Spec.Suspend).To(gomega.HaveValue(gomega.BeTrue()), "Kueue's webhook suspends a queued Job")

	var pr *unstructured.Unstructured
	g.Eventually(func(g gomega.Gomega) {
		wl := workloadOf(g, job)
		g.Expect(isTrue(g, wl, conditionQuota)).To(gomega.BeTrue())
		pr = provisioningRequestOf(g, wl)
	}).WithTimeout(60 * time.Second).Should(gomega.Succeed())
	class, _, _ := unstructured.NestedString(pr.Object, "spec", "provisioningClassName")
	g.Expect(class).To(gomega.Equal(atomicClass))
	podSets, _, _ := unstructured.NestedSlice(pr.Object, "spec", "podSets")
	g.Expect(podSets).To(gomega.HaveLen(1))
	g.Expect(podSets[0]).To(gomega.HaveKeyWithValue("count", gomega.BeNumerically("==", workers)))

	var wl *unstructured.Unstructured
	g.Eventually(func(g gomega.Gomega) {
		wl = workloadOf(g, job)
		g.Expect(isTrue(g, wl, conditionAdmitted)).To(gomega.BeTrue())
	}).WithTimeout(90 * time.Second).Should(gomega.Succeed())
	admitted := meta.FindStatusCondition(conditions(g, wl), conditionAdmitted).LastTransitionTime
	g.Expect(checkState(g, wl, admissionCheck)).To(gomega.Equal(checkStateReady))
	g.Expect(isTrue(g, provisioningRequestOf(g, wl), conditionProvisioned)).To(gomega.BeTrue())
	claims := s.nodeClaims()
	g.Expect(claims).To(gomega.HaveLen(workers), "one node per worker, launched as one group")
	for _, nc := range claims {
		launched := meta.FindStatusCondition(nc.Status.Conditions, v1.ConditionTypeLaunched)
		g.Expect(launched).NotTo(gomega.BeNil())
		g.Expect(launched.Status).To(gomega.Equal(metav1.ConditionTrue), "NodeClaim %s not launched when the Workload was admitted", nc.Name)
		// Condition times have a resolution of a second.
		g.Expect(launched.LastTransitionTime.After(admitted.Time)).To(gomega.BeFalse(),
			"NodeClaim %s launched at %s, after the Workload's admission at %s", nc.Name, launched.LastTransitionTime, admitted)
	}

	g.Eventually(func(g gomega.Gomega) {
		nodes := map[string]bool{}
		for _, nc := range s.nodeClaims() {
			nodes[nc.Status.NodeName] = true
		}
		pods := test.RunningPods(c, s.ns)
		g.Expect(pods).To(gomega.HaveLen(workers))
		used := map[string]bool{}
		for _, p := range pods {
			g.Expect(nodes).To(gomega.HaveKey(p.Spec.NodeName), "pod %s runs outside the provisioned nodes", p.Name)
			g.Expect(p.Annotations).To(gomega.HaveKeyWithValue(consumeAnnotation, pr.GetName()))
			used[p.Spec.NodeName] = true
		}
		g.Expect(used).To(gomega.HaveLen(workers), "one worker per node, none left empty")
	}).WithTimeout(60 * time.Second).Should(gomega.Succeed())
	g.Expect(s.nodeClaims()).To(gomega.HaveLen(workers), "nothing launched beyond the request")
}

// TestKueueDoesNotAdmitAJobThatCannotFit: 8 workers need 8 c5.xlarge in
// us-west-2a, where the cloud has 4 spot and 3 on-demand. Capstan
// launches for all of them or none: what it launched is released and the
// request stays unprovisioned (Provisioned False, as the API has it while
// the autoscaler keeps trying), so Kueue keeps the Workload waiting on its
// admission check, with Capstan's message, and never admits it.
func TestKueueDoesNotAdmitAJobThatCannotFit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := test.NewGomega(t)
	c := cluster.Client
	s := newScenario(t, in(v1.LabelInstanceType, "c5.xlarge"), in(corev1.LabelTopologyZone, "us-west-2a"),
		in(v1.CapacityTypeLabelKey, v1.CapacityTypeSpot, v1.CapacityTypeOnDemand))
	job := s.job(g)
	g.Expect(c.Create(ctx, job)).To(gomega.Succeed())

	var wl, pr *unstructured.Unstructured
	g.Eventually(func(g gomega.Gomega) {
		created := 0
		for _, e := range s.guard.History() {
			if e.Kind == invariants.Created {
				created++
			}
		}
		g.Expect(created).To(gomega.BeNumerically(">=", workers), "Capstan tries to launch the whole group")
		g.Expect(s.nodeClaims()).To(gomega.BeEmpty(), "what was launched for the Job is released")
		wl = workloadOf(g, job)
		pr = provisioningRequestOf(g, wl)
		provisioned := meta.FindStatusCondition(conditions(g, pr), conditionProvisioned)
		g.Expect(provisioned).NotTo(gomega.BeNil())
		g.Expect(provisioned.Status).To(gomega.Equal(metav1.ConditionFalse))
		g.Expect(checkMessage(g, wl, admissionCheck)).To(gomega.Equal(provisioned.Message), "Kueue shows Capstan's answer")
	}).WithTimeout(2 * time.Minute).Should(gomega.Succeed())
	g.Expect(checkState(g, wl, admissionCheck)).To(gomega.Equal(checkStatePending))
	g.Expect(isTrue(g, wl, conditionAdmitted)).To(gomega.BeFalse())
	events := &corev1.EventList{}
	g.Expect(c.List(ctx, events, client.InNamespace(s.ns))).To(gomega.Succeed())
	for _, e := range events.Items {
		if e.InvolvedObject.UID == wl.GetUID() && e.Reason == conditionAdmitted {
			t.Errorf("the Workload was admitted: %s", e.Message)
		}
	}
	pods := &corev1.PodList{}
	g.Expect(c.List(ctx, pods, client.InNamespace(s.ns))).To(gomega.Succeed())
	g.Expect(pods.Items).To(gomega.BeEmpty(), "the Job never started")
}
