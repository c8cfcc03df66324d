package ec2nodeclass

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	awsprovider "github.com/capstan-dev/capstan/pkg/cloudprovider/aws"
	"github.com/capstan-dev/capstan/pkg/test"
	"github.com/capstan-dev/capstan/test/ec2endpoint"
)

// endpoint is a local EC2 and IAM endpoint for cluster "test" in
// us-west-2, and SDK clients of it.
type endpoint struct {
	server *ec2endpoint.Server
	ec2    *ec2.Client
	iam    *iam.Client
	eks    *eks.Client
}

func startEndpoint(t *testing.T) endpoint {
	t.Helper()
	s, err := ec2endpoint.New(ec2endpoint.Options{ClusterName: "test", Profile: &simv1alpha1.CloudProfile{Spec: simv1alpha1.CloudProfileSpec{
		Region: "us-west-2", Zones: []string{"us-west-2a", "us-west-2b"}, Style: simv1alpha1.CloudStyleAWS,
	}}, ClusterEndpoint: "https://test.eks.test", ClusterCABundle: "Q0E="})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	creds := credentials.NewStaticCredentialsProvider("AKID", "SECRET", "")
	return endpoint{
		server: s,
		ec2: ec2.New(ec2.Options{Region: "us-west-2", BaseEndpoint: aws.String(hs.URL), Credentials: creds,
			RetryMaxAttempts: 1, HTTPClient: ec2endpoint.NewHTTPClient()}),
		iam: iam.New(iam.Options{Region: "us-west-2", BaseEndpoint: aws.String(hs.URL), Credentials: creds,
			RetryMaxAttempts: 1, HTTPClient: ec2endpoint.NewHTTPClient()}),
		eks: eks.New(eks.Options{Region: "us-west-2", BaseEndpoint: aws.String(hs.URL), Credentials: creds,
			RetryMaxAttempts: 1, HTTPClient: ec2endpoint.NewHTTPClient()}),
	}
}

// discovery discovers cluster through the endpoint's EKS.
func (e endpoint) discovery(cluster string) *awsprovider.ClusterDiscovery {
	return &awsprovider.ClusterDiscovery{EKS: e.eks, Name: cluster, Services: env.Client, Clock: clocktesting.NewFakeClock(start)}
}

// roleClass is an EC2NodeClass selecting the endpoint's subnets, groups
// and AL2023 images, with spec.role.
func roleClass(role string) *awsv1.EC2NodeClass {
	return ec2NodeClass(func(nc *awsv1.EC2NodeClass) { nc.Spec.InstanceProfile, nc.Spec.Role = nil, role })
}

// roleDeps are the controller's deps on e, its cluster the one named
// test, with iamAPI as IAM.
func roleDeps(e endpoint, iamAPI IAM, recorder events.EventRecorder) Deps {
	return Deps{Client: env.Client, EC2: e.ec2, IAM: iamAPI, Clock: clocktesting.NewFakeClock(start), Recorder: recorder, Cluster: e.discovery("test")}
}

// roleOptions are the controller's options for e's cluster.
func roleOptions() Options {
	return Options{KubernetesVersion: ec2endpoint.DefaultKubernetesVersion, ClusterName: "test", Region: "us-west-2"}
}

// profiles are the endpoint's instance profiles by name.
func profiles(e endpoint) map[string]ec2endpoint.InstanceProfile {
	out := map[string]ec2endpoint.InstanceProfile{}
	for _, p := range e.server.InstanceProfiles() {
		out[p.Name] = p
	}
	return out
}

// A class with spec.role, run by a manager against the local endpoint:
// Capstan makes its instance profile with the role, the class is Ready
// with the profile in its status and carries the finalizer; a role
// change swaps the role in the same profile; a role that does not exist
// is RoleNotFound; deleted, the class waits for its NodeClaim, then the
// profile is deleted and the finalizer goes.
func TestRoleWithManager(t *testing.T) {
	g := test.NewGomega(t)
	ctx := context.Background()
	e := startEndpoint(t)
	startManager(t, func(mgr manager.Manager) error {
		deps := roleDeps(e, e.iam, mgr.GetEventRecorder("test"))
		deps.Client = mgr.GetClient()
		return mustNew(t, deps, roleOptions()).Register(t.Context(), mgr)
	})
	nc := roleClass("KarpenterNodeRole-test")
	nc.Spec.Tags = map[string]string{"team": "ml"}
	create(t, nc)
	key := client.ObjectKeyFromObject(nc)
	name := InstanceProfileName("test", "us-west-2", nc.Name)

	got := &awsv1.EC2NodeClass{}
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(env.Client.Get(ctx, key, got)).To(gomega.Succeed())
		expectCondition(g, got, awsv1.ConditionTypeReady, metav1.ConditionTrue, awsv1.ConditionTypeReady)
		g.Expect(got.Status.InstanceProfile).To(gomega.Equal(name))
		g.Expect(got.Finalizers).To(gomega.ContainElement(TerminationFinalizer))
	}).Should(gomega.Succeed())
	p := profiles(e)[name]
	g.Expect(p.Roles).To(gomega.Equal([]string{"KarpenterNodeRole-test"}))
	g.Expect(p.Path).To(gomega.Equal("/karpenter/us-west-2/test/" + string(got.UID) + "/"))
	g.Expect(p.Tags).To(gomega.Equal(map[string]string{"team": "ml", "kubernetes.io/cluster/test": "owned",
		"eks:eks-cluster-name": "test", "karpenter.k8s.aws/ec2nodeclass": nc.Name, "topology.kubernetes.io/region": "us-west-2"}))

	setRole := func(role string) {
		patched := got.DeepCopy()
		patched.Spec.Role = role
		g.Expect(env.Client.Patch(ctx, patched, client.MergeFrom(got))).To(gomega.Succeed())
	}
	// roleInProfile waits for the class to be Ready with role in its
	// profile.
	roleInProfile := func(role string) {
		g.Eventually(func(g gomega.Gomega) {
			g.Expect(env.Client.Get(ctx, key, got)).To(gomega.Succeed())
			expectCondition(g, got, awsv1.ConditionTypeReady, metav1.ConditionTrue, awsv1.ConditionTypeReady)
			g.Expect(profiles(e)[name].Roles).To(gomega.Equal([]string{role}))
		}).Should(gomega.Succeed())
	}

	// Another role: swapped in the same profile.
	setRole("capstan-node-role")
	roleInProfile("capstan-node-role")
	g.Expect(got.Status.InstanceProfile).To(gomega.Equal(name))
	g.Expect(profiles(e)).To(gomega.HaveLen(1))

	// A typo: not Ready, and says why.
	setRole("capstan-node-rol")
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(env.Client.Get(ctx, key, got)).To(gomega.Succeed())
		c := expectCondition(g, got, awsv1.ConditionTypeInstanceProfileReady, metav1.ConditionFalse, ReasonRoleNotFound)
		g.Expect(c.Message).To(gomega.HavePrefix(`role "capstan-node-rol" in spec.role does not exist in the account`))
		g.Expect(c.Message).To(gomega.ContainSubstring("The role with name capstan-node-rol cannot be found."))
		expectCondition(g, got, awsv1.ConditionTypeReady, metav1.ConditionFalse, ReasonRoleNotFound)
		g.Expect(got.Status.InstanceProfile).To(gomega.BeEmpty())
	}).Should(gomega.Succeed())
	setRole("capstan-node-role")
	roleInProfile("capstan-node-role")

	// Deleted while a NodeClaim uses it: it waits.
	claim := test.NodeClaim(func(c *v1.NodeClaim) {
		c.Spec.NodeClassRef = &v1.NodeClassReference{Group: awsv1.Group, Kind: "EC2NodeClass", Name: nc.Name}
	})
	create(t, claim)
	g.Expect(env.Client.Delete(ctx, got)).To(gomega.Succeed())
	g.Consistently(func(g gomega.Gomega) {
		g.Expect(env.Client.Get(ctx, key, got)).To(gomega.Succeed())
		g.Expect(got.DeletionTimestamp).NotTo(gomega.BeNil())
		g.Expect(profiles(e)).To(gomega.HaveKey(name))
	}, "1s").Should(gomega.Succeed())

	// The NodeClaim gone, the profile is deleted and the class with it.
	g.Expect(env.Client.Delete(ctx, claim)).To(gomega.Succeed())
	g.Eventually(func(g gomega.Gomega) {
		err := env.Client.Get(ctx, key, got)
		g.Expect(apierrors.IsNotFound(err)).To(gomega.BeTrue(), "get: %v", err)
	}).Should(gomega.Succeed())
	g.Expect(profiles(e)).To(gomega.BeEmpty())
}

// Reconcile called directly: a class with spec.instanceProfile makes no
// profile and gets no finalizer; one with a role gets both, and moved to
// spec.instanceProfile keeps the finalizer, so that its profile is still
// deleted with it; without an IAM client a role is
// InstanceProfileCreationFailed.
func TestReconcileRoleAndInstanceProfile(t *testing.T) {
	g := test.NewGomega(t)
	ctx := context.Background()
	e := startEndpoint(t)
	c := mustNew(t, roleDeps(e, e.iam, events.NewFakeRecorder(10)), roleOptions())

	plain := ec2NodeClass()
	create(t, plain)
	_, err := c.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(plain)})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	got := &awsv1.EC2NodeClass{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(plain), got)).To(gomega.Succeed())
	g.Expect(got.Finalizers).To(gomega.BeEmpty())
	g.Expect(got.Status.InstanceProfile).To(gomega.Equal("capstan-node"))
	g.Expect(e.server.InstanceProfiles()).To(gomega.BeEmpty())

	nc := roleClass("capstan-node-role")
	create(t, nc)
	req := reconcile.Request{NamespacedName: client.ObjectKeyFromObject(nc)}
	res, err := c.Reconcile(ctx, req)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(res.RequeueAfter).To(gomega.Equal(DefaultRefreshPeriod))
	g.Expect(env.Client.Get(ctx, req.NamespacedName, got)).To(gomega.Succeed())
	g.Expect(controllerutil.ContainsFinalizer(got, TerminationFinalizer)).To(gomega.BeTrue())
	name := InstanceProfileName("test", "us-west-2", nc.Name)
	g.Expect(got.Status.InstanceProfile).To(gomega.Equal(name))

	// Again: nothing changes, no second profile.
	before := got.ResourceVersion
	_, err = c.Reconcile(ctx, req)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(env.Client.Get(ctx, req.NamespacedName, got)).To(gomega.Succeed())
	g.Expect(got.ResourceVersion).To(gomega.Equal(before))
	g.Expect(e.server.InstanceProfiles()).To(gomega.HaveLen(1))

	patched := got.DeepCopy()
	patched.Spec.Role, patched.Spec.InstanceProfile = "", new("mine")
	g.Expect(env.Client.Patch(ctx, patched, client.MergeFrom(got))).To(gomega.Succeed())
	_, err = c.Reconcile(ctx, req)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(env.Client.Get(ctx, req.NamespacedName, got)).To(gomega.Succeed())
	g.Expect(got.Status.InstanceProfile).To(gomega.Equal("mine"))
	g.Expect(got.Finalizers).To(gomega.ContainElement(TerminationFinalizer))

	g.Expect(env.Client.Delete(ctx, got)).To(gomega.Succeed())
	_, err = c.Reconcile(ctx, req)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, req.NamespacedName, got))).To(gomega.BeTrue())
	g.Expect(e.server.InstanceProfiles()).To(gomega.BeEmpty())

	// No IAM client.
	noIAM := mustNew(t, roleDeps(e, nil, events.NewFakeRecorder(10)), roleOptions())
	other := roleClass("capstan-node-role")
	create(t, other)
	req = reconcile.Request{NamespacedName: client.ObjectKeyFromObject(other)}
	_, err = noIAM.Reconcile(ctx, req)
	g.Expect(err).To(gomega.MatchError(gomega.ContainSubstring("no IAM client")))
	g.Expect(env.Client.Get(ctx, req.NamespacedName, got)).To(gomega.Succeed())
	expectCondition(g, got, awsv1.ConditionTypeInstanceProfileReady, metav1.ConditionFalse, ReasonInstanceProfileCreationFailed)
	// The finalizer is removed at deletion even so: there is no profile.
	g.Expect(env.Client.Delete(ctx, got)).To(gomega.Succeed())
	_, err = c.Reconcile(ctx, req)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, req.NamespacedName, got))).To(gomega.BeTrue())
}
