//go:build e2e

package reservations

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/explain"
	"github.com/capstan-dev/capstan/pkg/flavors"
	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/test"
)

// capstanExplain runs `capstan explain ... -o json` against the
// controller, or with the admin kubeconfig alone when offline.
func capstanExplain(g gomega.Gomega, into any, offline bool, args ...string) {
	root, err := test.ModuleRoot()
	g.Expect(err).NotTo(gomega.HaveOccurred())
	args = append([]string{"explain"}, append(args, "-o", "json")...)
	if !offline {
		args = append(args, "--controller-address", controller)
	}
	cmd := exec.Command(filepath.Join(root, "bin", "capstan"), args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+cluster.Kubeconfig)
	out, err := cmd.Output()
	g.Expect(err).NotTo(gomega.HaveOccurred(), "capstan %v: %s", args, out)
	g.Expect(json.Unmarshal(out, into)).To(gomega.Succeed())
}

// pendingPod creates a pod for the scenario's NodePool.
func pendingPod(g gomega.Gomega, ns, cpu string, mods ...func(*corev1.Pod)) *corev1.Pod {
	p := test.Pod(ns, func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("512Mi")}
		p.Spec.Tolerations = []corev1.Toleration{{Key: "scenario", Operator: corev1.TolerationOpEqual, Value: ns, Effect: corev1.TaintEffectNoSchedule}}
	})
	for _, m := range mods {
		m(p)
	}
	g.Expect(cluster.Client.Create(context.Background(), p)).To(gomega.Succeed())
	return p
}

// explainedBy waits until `capstan explain pod` gives the NodePool's
// verdict the reason, and returns the answer.
func explainedBy(g gomega.Gomega, p *corev1.Pod, pool string, reason string) explain.Pod {
	var answer explain.Pod
	g.Eventually(func(g gomega.Gomega) {
		answer = explain.Pod{}
		capstanExplain(g, &answer, false, "pod", p.Namespace+"/"+p.Name)
		g.Expect(answer.Considered).To(gomega.BeTrue(), "%+v", answer)
		g.Expect(verdict(answer, pool).Reason).To(gomega.Equal(reason), "%+v", answer)
	}).WithTimeout(60 * time.Second).Should(gomega.Succeed())
	return answer
}

func verdict(p explain.Pod, pool string) explain.PoolVerdict {
	for _, v := range p.NodePools {
		if v.NodePool == pool {
			return v
		}
	}
	return explain.PoolVerdict{}
}

func TestExplainNodePoolLimit(t *testing.T) {
	g := test.NewGomega(t)
	ns, np := scenarioWith(t, nil, func(np *v1.NodePool) {
		np.Spec.Limits = v1.Limits{corev1.ResourceCPU: resource.MustParse("2")}
	}, in(v1.LabelInstanceType, "c5.xlarge"))
	p := pendingPod(g, ns, "3")
	answer := explainedBy(g, p, np.Name, string(provisioning.ReasonNodePoolLimitExceeded))
	g.Expect(verdict(answer, np.Name).Limits).To(gomega.Equal([]explain.Limit{{Resource: "cpu", Used: "0", Limit: "2"}}))
	g.Expect(answer.Next).To(gomega.ContainSubstring("NodePoolLimitExceeded"))
}

func TestExplainUntoleratedTaint(t *testing.T) {
	g := test.NewGomega(t)
	ns, np := scenarioWith(t, nil, func(np *v1.NodePool) {
		np.Spec.Template.Spec.Taints = append(np.Spec.Template.Spec.Taints, corev1.Taint{Key: "nvidia.com/gpu", Effect: corev1.TaintEffectNoSchedule})
	}, in(v1.LabelInstanceType, "g4dn.xlarge"))
	p := pendingPod(g, ns, "1", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{v1.NodePoolLabelKey: np.Name} })
	answer := explainedBy(g, p, np.Name, string(provisioning.ReasonTaintNotTolerated))
	g.Expect(verdict(answer, np.Name).Message).To(gomega.ContainSubstring("nvidia.com/gpu"))

	// Without the controller: the taint is still found, and the answer
	// says what only the controller knows.
	// The last reason comes from the provisioner's event, recorded after
	// its batch window.
	g.Eventually(func(g gomega.Gomega) {
		var offline explain.Pod
		capstanExplain(g, &offline, true, "pod", p.Namespace+"/"+p.Name)
		g.Expect(verdict(offline, np.Name).Reason).To(gomega.Equal(string(provisioning.ReasonTaintNotTolerated)))
		g.Expect(offline.Unknown).NotTo(gomega.BeEmpty())
		g.Expect(offline.LastEvent).To(gomega.ContainSubstring("TaintNotTolerated"))
	}).WithTimeout(30 * time.Second).Should(gomega.Succeed())
}

func TestExplainReservationExhausted(t *testing.T) {
	g := test.NewGomega(t)
	ns, np := scenarioWith(t, []simv1alpha1.CapacityReservationSelectorTerm{{ID: "cr-explain"}}, func(np *v1.NodePool) {
		np.Spec.Limits = v1.Limits{corev1.ResourceCPU: resource.MustParse("100")}
	}, in(v1.CapacityTypeLabelKey, v1.CapacityTypeReserved), in(v1.LabelInstanceType, "c5.xlarge"))
	g.Expect(cluster.Client.Create(context.Background(), spreadOut(ns, 2))).To(gomega.Succeed())
	var waiting *corev1.Pod
	g.Eventually(func(g gomega.Gomega) {
		pods := &corev1.PodList{}
		g.Expect(cluster.Client.List(context.Background(), pods, client.InNamespace(ns))).To(gomega.Succeed())
		g.Expect(pods.Items).To(gomega.HaveLen(2))
		// The waiting pod is the one left once the other is bound: before
		// that, either may still be bound to the reserved node.
		waiting = nil
		bound := 0
		for i, p := range pods.Items {
			if p.Spec.NodeName == "" {
				waiting = &pods.Items[i]
			} else {
				bound++
			}
		}
		g.Expect(launchedBy(claimsOf(g, np))).To(gomega.Equal(map[string]int{"reserved/cr-explain": 1}))
		g.Expect(bound).To(gomega.Equal(1))
		g.Expect(waiting).NotTo(gomega.BeNil())
	}).WithTimeout(90 * time.Second).Should(gomega.Succeed())
	explainedBy(g, waiting, np.Name, string(provisioning.ReasonReservationExhausted))

	// The NodePool: its limit and use, its node, what it costs.
	g.Eventually(func(g gomega.Gomega) {
		var pool explain.NodePool
		capstanExplain(g, &pool, false, "nodepool", np.Name)
		g.Expect(pool.Limits).To(gomega.Equal([]explain.Limit{{Resource: "cpu", Used: "4", Limit: "100"}}))
		g.Expect(pool.Nodes).To(gomega.Equal(map[string]int{v1.CapacityTypeReserved: 1}))
		g.Expect(pool.CostPerHour).NotTo(gomega.BeNil())
		g.Expect(*pool.CostPerHour).To(gomega.BeNumerically(">", 0))
		g.Expect(pool.Budgets).To(gomega.HaveLen(1))
		g.Expect(pool.Budgets[0].Active).To(gomega.BeTrue())
	}).WithTimeout(30 * time.Second).Should(gomega.Succeed())

	// The node: reserved, and why.
	claims := claimsOf(g, np)
	var node explain.Node
	capstanExplain(g, &node, false, "node", claims[0].Status.NodeName)
	g.Expect(node.NodeClaim).To(gomega.Equal(claims[0].Name))
	g.Expect(node.CapacityType).To(gomega.Equal(v1.CapacityTypeReserved))
	g.Expect(node.ReservationID).To(gomega.Equal("cr-explain"))
	g.Expect(node.Lifecycle).To(gomega.Equal("Ready"))
}

func TestExplainUnknownFlavor(t *testing.T) {
	g := test.NewGomega(t)
	ns, np := gpuPool(t, "g5g.xlarge", "g4dn.xlarge")
	model := openModel(t, np)
	p := gpuPod(ns, serving(model, "h100"))
	g.Expect(cluster.Client.Create(context.Background(), p)).To(gomega.Succeed())
	answer := explainedBy(g, p, np.Name, flavors.ReasonUnknownInferenceFlavor)
	g.Expect(verdict(answer, np.Name).Message).To(gomega.ContainSubstring("h100"))
	g.Expect(answer.Next).To(gomega.ContainSubstring(flavors.ReasonUnknownInferenceFlavor))
}
