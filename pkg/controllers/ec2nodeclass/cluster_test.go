package ec2nodeclass

import (
	"context"
	"testing"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	awsprovider "github.com/capstan-dev/capstan/pkg/cloudprovider/aws"
)

// flagsOnly is a cluster whose every coordinate the flags give: EKS and
// the kube-dns Service are never asked.
var flagsOnly = &awsprovider.ClusterDiscovery{Name: "test", Clock: clocktesting.NewFakeClock(start),
	Overrides: awsprovider.Bootstrap{Endpoint: "https://test.eks.test", CABundle: "Q0E=", ServiceCIDR: "172.20.0.0/16", ClusterDNS: "172.20.0.10"}}

// What nodes join, discovered through the endpoint's EKS and the
// cluster's kube-dns Service: a class is valid when its AMI family's
// user data has what it needs, and ClusterResolutionFailed (so not
// Ready) when DescribeCluster does not know the cluster, except a Custom
// family's, whose user data is the user's own.
func TestClusterDiscoveryConditions(t *testing.T) {
	ctx := context.Background()
	e := startEndpoint(t)
	dns := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "kube-dns"},
		Spec: corev1.ServiceSpec{ClusterIP: "10.0.0.10", Ports: []corev1.ServicePort{{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP}}}}
	create(t, dns)
	b, err := e.discovery("test").Bootstrap(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := (awsprovider.Bootstrap{Endpoint: "https://test.eks.test", CABundle: "Q0E=", ServiceCIDR: "172.20.0.0/16", ClusterDNS: "10.0.0.10"}); b != want {
		t.Errorf("discovered %+v, want %+v", b, want)
	}
	custom := func(nc *awsv1.EC2NodeClass) {
		nc.Spec.AMIFamily = ptr.To(awsv1.AMIFamilyCustom)
		nc.Spec.AMISelectorTerms = []awsv1.AMISelectorTerm{{Name: "amazon-eks-node-al2023-*", Owner: "amazon"}}
	}
	cases := []struct {
		name    string
		cluster string
		mod     func(*awsv1.EC2NodeClass)
		status  metav1.ConditionStatus
		reason  string
	}{
		{"AL2023, the cluster described", "test", nil, metav1.ConditionTrue, awsv1.ConditionTypeValidationSucceeded},
		{"AL2023, no such cluster", "missing", nil, metav1.ConditionFalse, ReasonClusterResolutionFailed},
		{"Custom, no such cluster", "missing", custom, metav1.ConditionTrue, awsv1.ConditionTypeValidationSucceeded},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := gomega.NewWithT(t)
			deps := roleDeps(e, e.iam, events.NewFakeRecorder(10))
			deps.Cluster = e.discovery(tc.cluster)
			c := mustNew(t, deps, roleOptions())
			var mods []func(*awsv1.EC2NodeClass)
			if tc.mod != nil {
				mods = append(mods, tc.mod)
			}
			nc := ec2NodeClass(mods...)
			create(t, nc)
			_, err := c.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(nc)})
			g.Expect(err).NotTo(gomega.HaveOccurred())
			got := &awsv1.EC2NodeClass{}
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(nc), got)).To(gomega.Succeed())
			cond := expectCondition(g, got, awsv1.ConditionTypeValidationSucceeded, tc.status, tc.reason)
			ready := expectCondition(g, got, awsv1.ConditionTypeReady, tc.status, map[bool]string{true: awsv1.ConditionTypeReady, false: ReasonClusterResolutionFailed}[tc.status == metav1.ConditionTrue])
			if tc.status == metav1.ConditionFalse {
				g.Expect(cond.Message).To(gomega.And(gomega.ContainSubstring("--cluster-endpoint"), gomega.ContainSubstring("ResourceNotFoundException")))
				g.Expect(ready.Message).To(gomega.ContainSubstring(cond.Message))
			}
		})
	}
}
