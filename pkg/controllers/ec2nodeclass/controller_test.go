package ec2nodeclass

import (
	"context"
	"errors"
	"testing"
	"time"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	"github.com/capstan-dev/capstan/pkg/test"
)

// mustNew is New, failing the test on an error.
func mustNew(t *testing.T, deps Deps, opts Options) *Controller {
	t.Helper()
	ctrl, err := New(deps, opts)
	if err != nil {
		t.Fatal(err)
	}
	return ctrl
}

// New refuses deps without the cluster, which every reconcile reads,
// rather than panic on the first one.
func TestNewNeedsTheCluster(t *testing.T) {
	clk := clocktesting.NewFakeClock(start)
	if _, err := New(Deps{Client: env.Client, EC2: account(), Clock: clk, Recorder: events.NewFakeRecorder(1)}, Options{}); err == nil {
		t.Error("New without Deps.Cluster succeeded, want an error")
	}
	if _, err := New(Deps{Client: env.Client, EC2: account(), Clock: clk, Recorder: events.NewFakeRecorder(1), Cluster: flagsOnly}, Options{}); err != nil {
		t.Errorf("New with the cluster: %v", err)
	}
}

// account is what the controller tests' EC2 holds: a subnet and a
// security group tagged for the cluster, and amazon's AL2023 images for
// Kubernetes 1.30 on both architectures.
func account() *fakeEC2 {
	return &fakeEC2{
		now: start,
		subnets: []ec2types.Subnet{
			subnet("subnet-a", "us-west-2a", "usw2-az1", 100, "karpenter.sh/discovery", "test"),
		},
		groups: []ec2types.SecurityGroup{group("sg-1", "nodes", "karpenter.sh/discovery", "test")},
		images: []ec2types.Image{
			image("ami-x", "amazon-eks-node-al2023-x86_64-standard-1.30-v20240807", "amazon", ec2types.ArchitectureValuesX8664, start.Add(-time.Hour)),
			image("ami-a", "amazon-eks-node-al2023-arm64-standard-1.30-v20240807", "amazon", ec2types.ArchitectureValuesArm64, start.Add(-time.Hour)),
		},
	}
}

// ec2NodeClass is a valid EC2NodeClass with a random name selecting
// account()'s subnet and group by tag and AL2023 by alias, with an
// instance profile; each modifier edits it in turn.
func ec2NodeClass(mods ...func(*awsv1.EC2NodeClass)) *awsv1.EC2NodeClass {
	nc := &awsv1.EC2NodeClass{}
	nc.Name = test.RandomName("ec2nodeclass")
	nc.Spec = awsv1.EC2NodeClassSpec{
		SubnetSelectorTerms:        []awsv1.SubnetSelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "test"}}},
		SecurityGroupSelectorTerms: []awsv1.SecurityGroupSelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "test"}}},
		AMISelectorTerms:           []awsv1.AMISelectorTerm{{Alias: "al2023@latest"}},
		InstanceProfile:            ptr.To("capstan-node"),
	}
	for _, mod := range mods {
		mod(nc)
	}
	return nc
}

func create(t *testing.T, obj client.Object) {
	t.Helper()
	ctx := context.Background()
	if err := env.Client.Create(ctx, obj); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(ctx, obj) })
}

// expectCondition asserts nc carries condition typ with status and
// reason for its current generation.
func expectCondition(g gomega.Gomega, nc *awsv1.EC2NodeClass, typ string, status metav1.ConditionStatus, reason string) *metav1.Condition {
	c := meta.FindStatusCondition(nc.Status.Conditions, typ)
	g.Expect(c).NotTo(gomega.BeNil(), "condition %s", typ)
	g.Expect(c.Status).To(gomega.Equal(status), "condition %s: %+v", typ, c)
	g.Expect(c.Reason).To(gomega.Equal(reason), "condition %s: %+v", typ, c)
	g.Expect(c.ObservedGeneration).To(gomega.Equal(nc.Generation), "condition %s", typ)
	return c
}

// Run by a manager: the class becomes Ready with the subnet, group and
// both architectures' images, follows a spot max price annotation EC2
// would refuse (which changes no generation) and a spec change to a
// subnet that does not exist.
func TestEC2NodeClassWithManager(t *testing.T) {
	g := test.NewGomega(t)
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(start)
	startManager(t, func(mgr manager.Manager) error {
		return mustNew(t, Deps{Client: mgr.GetClient(), EC2: account(), Clock: clk, Recorder: mgr.GetEventRecorder("test"), Cluster: flagsOnly},
			Options{KubernetesVersion: "v1.30.4"}).Register(t.Context(), mgr)
	})
	nc := ec2NodeClass()
	create(t, nc)
	key := client.ObjectKeyFromObject(nc)

	got := &awsv1.EC2NodeClass{}
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(env.Client.Get(ctx, key, got)).To(gomega.Succeed())
		expectCondition(g, got, awsv1.ConditionTypeReady, metav1.ConditionTrue, awsv1.ConditionTypeReady)
		g.Expect(got.Status.Subnets).To(gomega.Equal([]awsv1.Subnet{{ID: "subnet-a", Zone: "us-west-2a", ZoneID: "usw2-az1"}}))
		g.Expect(got.Status.SecurityGroups).To(gomega.Equal([]awsv1.SecurityGroup{{ID: "sg-1", Name: "nodes"}}))
		g.Expect(amiIDs(got.Status)).To(gomega.ConsistOf(
			"ami-x/amd64/instance-gpu-count-DoesNotExist/instance-accelerator-count-DoesNotExist",
			"ami-a/arm64/instance-gpu-count-DoesNotExist/instance-accelerator-count-DoesNotExist"))
		g.Expect(got.Status.InstanceProfile).To(gomega.Equal("capstan-node"))
	}).Should(gomega.Succeed())

	patched := got.DeepCopy()
	patched.Annotations = map[string]string{awsv1.SpotMaxPriceAnnotationKey: "cheap"}
	g.Expect(env.Client.Patch(ctx, patched, client.MergeFrom(got))).To(gomega.Succeed())
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(env.Client.Get(ctx, key, got)).To(gomega.Succeed())
		expectCondition(g, got, awsv1.ConditionTypeValidationSucceeded, metav1.ConditionFalse, ReasonInvalidSpotMaxPrice)
		expectCondition(g, got, awsv1.ConditionTypeReady, metav1.ConditionFalse, ReasonInvalidSpotMaxPrice)
	}).Should(gomega.Succeed())

	patched = got.DeepCopy()
	patched.Annotations = nil
	patched.Spec.SubnetSelectorTerms = []awsv1.SubnetSelectorTerm{{ID: "subnet-missing"}}
	g.Expect(env.Client.Patch(ctx, patched, client.MergeFrom(got))).To(gomega.Succeed())
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(env.Client.Get(ctx, key, got)).To(gomega.Succeed())
		c := expectCondition(g, got, awsv1.ConditionTypeSubnetsReady, metav1.ConditionFalse, ReasonSubnetsNotFound)
		g.Expect(c.Message).To(gomega.Equal(`no subnet matches subnetSelectorTerms [{"id":"subnet-missing"}]`))
		expectCondition(g, got, awsv1.ConditionTypeReady, metav1.ConditionFalse, ReasonSubnetsNotFound)
		g.Expect(got.Status.Subnets).To(gomega.BeEmpty())
	}).Should(gomega.Succeed())
}

// Reconcile called directly with a fake clock: a missing subnet is
// reported, with one event, and looked for again every minute; once it
// exists the class is Ready and looked at every five minutes; a failing
// EC2 call keeps the status and is returned.
func TestReconcileMissingSubnet(t *testing.T) {
	g := test.NewGomega(t)
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(start)
	api := account()
	recorder := events.NewFakeRecorder(10)
	c := mustNew(t, Deps{Client: env.Client, EC2: api, Clock: clk, Recorder: recorder, Cluster: flagsOnly}, Options{KubernetesVersion: "1.30"})
	nc := ec2NodeClass(func(nc *awsv1.EC2NodeClass) {
		nc.Spec.SubnetSelectorTerms = []awsv1.SubnetSelectorTerm{{Tags: map[string]string{"team": "ml"}}}
	})
	create(t, nc)
	req := reconcile.Request{NamespacedName: types.NamespacedName{Name: nc.Name}}
	got := &awsv1.EC2NodeClass{}
	reconcileAndGet := func() (reconcile.Result, error) {
		t.Helper()
		res, err := c.Reconcile(ctx, req)
		if getErr := env.Client.Get(ctx, req.NamespacedName, got); getErr != nil {
			t.Fatal(getErr)
		}
		return res, err
	}

	res, err := reconcileAndGet()
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(res.RequeueAfter).To(gomega.Equal(DefaultNotReadyRefreshPeriod))
	cond := expectCondition(g, got, awsv1.ConditionTypeSubnetsReady, metav1.ConditionFalse, ReasonSubnetsNotFound)
	g.Expect(cond.Message).To(gomega.Equal(`no subnet matches subnetSelectorTerms [{"tags":{"team":"ml"}}]`))
	ready := expectCondition(g, got, awsv1.ConditionTypeReady, metav1.ConditionFalse, ReasonSubnetsNotFound)
	g.Expect(ready.Message).To(gomega.ContainSubstring("no subnet matches subnetSelectorTerms"))
	expectCondition(g, got, awsv1.ConditionTypeAMIsReady, metav1.ConditionTrue, awsv1.ConditionTypeAMIsReady)
	g.Expect(recorder.Events).To(gomega.HaveLen(1))
	g.Expect(<-recorder.Events).To(gomega.And(gomega.HavePrefix("Warning SubnetsNotFound"), gomega.ContainSubstring("no subnet matches")))

	// Nothing changed: nothing written, no second event.
	before := got.ResourceVersion
	_, err = reconcileAndGet()
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(got.ResourceVersion).To(gomega.Equal(before))
	g.Expect(recorder.Events).To(gomega.BeEmpty())

	// A minute on, someone tagged a subnet: Ready, refreshed every five
	// minutes.
	clk.Step(time.Minute)
	api.update(func(f *fakeEC2) {
		f.subnets = append(f.subnets, subnet("subnet-ml", "us-west-2b", "usw2-az2", 10, "team", "ml"))
	})
	res, err = reconcileAndGet()
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(res.RequeueAfter).To(gomega.Equal(DefaultRefreshPeriod))
	ready = expectCondition(g, got, awsv1.ConditionTypeReady, metav1.ConditionTrue, awsv1.ConditionTypeReady)
	g.Expect(ready.LastTransitionTime.Time).To(gomega.BeTemporally("==", start.Add(time.Minute)))
	g.Expect(got.Status.Subnets).To(gomega.Equal([]awsv1.Subnet{{ID: "subnet-ml", Zone: "us-west-2b", ZoneID: "usw2-az2"}}))

	// EC2 refuses: the error is returned, the status stays Ready.
	api.setFail("DescribeSubnets", errors.New("RequestLimitExceeded"))
	_, err = reconcileAndGet()
	g.Expect(err).To(gomega.MatchError(gomega.ContainSubstring("describing subnets, RequestLimitExceeded")))
	expectCondition(g, got, awsv1.ConditionTypeReady, metav1.ConditionTrue, awsv1.ConditionTypeReady)
	g.Expect(got.Status.Subnets).To(gomega.HaveLen(1))
	g.Expect(recorder.Events).To(gomega.BeEmpty())

	// A deleted class is no error.
	g.Expect(env.Client.Delete(ctx, nc)).To(gomega.Succeed())
	res, err = c.Reconcile(ctx, req)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(res).To(gomega.Equal(reconcile.Result{}))
}
