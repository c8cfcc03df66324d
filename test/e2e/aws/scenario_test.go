//go:build e2e

package aws

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/test"
	"github.com/capstan-dev/capstan/test/invariants"
)

// pendingBound is the longest a scenario's pod may stay Pending: a batch,
// a failed spot fleet and its retry on-demand, a launch and registration
// take a few seconds; the rest is slack for a shared machine.
const pendingBound = 45 * time.Second

// setup shapes a scenario.
type setup struct {
	// instanceTypes and capacityTypes the NodePool allows.
	instanceTypes, capacityTypes []string
	// reservations the EC2NodeClass selects, by id.
	reservations []string
	// slots bound the live NodeClaims in each reservation (the checker's).
	slots map[string]int
	// requirements are the NodePool's further requirements.
	requirements []v1.NodeSelectorRequirementWithMinValues
	// class changes the EC2NodeClass before it is created.
	class func(*awsv1.EC2NodeClass)
}

// scenario is one test's world: a namespace, an EC2NodeClass, a NodePool
// whose nodes only its pods tolerate (consolidation off until the test
// turns it on), and the invariant checker watching them.
type scenario struct {
	t     *testing.T
	g     gomega.Gomega
	ns    string
	class *awsv1.EC2NodeClass
	np    *v1.NodePool
	guard *invariants.Checker
}

// ec2NodeClass is testdata/ec2nodeclass.yaml for the endpoint's cluster,
// with a random name.
func ec2NodeClass(t *testing.T) *awsv1.EC2NodeClass {
	t.Helper()
	data, err := os.ReadFile("testdata/ec2nodeclass.yaml")
	if err != nil {
		t.Fatal(err)
	}
	class := &awsv1.EC2NodeClass{}
	if err := yaml.UnmarshalStrict([]byte(strings.ReplaceAll(string(data), "CLUSTER", clusterName)), class); err != nil {
		t.Fatal(err)
	}
	class.Name = test.RandomName("ec2nodeclass")
	if !aliasResolves() {
		// The same images by name: what the alias resolves to on a
		// cluster that reports its version (TestReferenceEC2NodeClass).
		class.Spec.AMIFamily = ptr.To(awsv1.AMIFamilyAL2023)
		class.Spec.AMISelectorTerms = []awsv1.AMISelectorTerm{{Name: "amazon-eks-node-al2023-x86_64-standard-1.37-*", Owner: "amazon"}}
	}
	return class
}

// aliasResolves reports whether the cluster's version names a Kubernetes
// release the endpoint has EKS images for (1.37), so that an alias
// resolves; see kubernetesVersion.
func aliasResolves() bool {
	return strings.HasPrefix(strings.TrimPrefix(kubernetesVersion, "v"), "1.37")
}

func start(t *testing.T, s setup) *scenario {
	t.Helper()
	ctx := context.Background()
	c := cluster.Client
	g := test.NewGomega(t)
	ns := test.Namespace(t, c)
	class := ec2NodeClass(t)
	for _, id := range s.reservations {
		class.Spec.CapacityReservationSelectorTerms = append(class.Spec.CapacityReservationSelectorTerms, awsv1.CapacityReservationSelectorTerm{ID: id})
	}
	if s.class != nil {
		s.class(class)
	}
	np := test.NodePool(func(np *v1.NodePool) {
		np.Spec.Template.Spec.NodeClassRef = &v1.NodeClassReference{Group: awsv1.Group, Kind: "EC2NodeClass", Name: class.Name}
		np.Spec.Template.Spec.Taints = []corev1.Taint{{Key: "scenario", Value: ns, Effect: corev1.TaintEffectNoSchedule}}
		np.Spec.Template.Spec.Requirements = append([]v1.NodeSelectorRequirementWithMinValues{
			{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: s.capacityTypes},
		}, s.requirements...)
		if s.instanceTypes != nil {
			np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements,
				v1.NodeSelectorRequirementWithMinValues{Key: v1.LabelInstanceType, Operator: corev1.NodeSelectorOpIn, Values: s.instanceTypes})
		}
		np.Spec.Disruption.ConsolidateAfter = v1.MustParseNillableDuration(v1.Never)
	})
	for _, o := range []client.Object{class, np} {
		g.Expect(c.Create(ctx, o)).To(gomega.Succeed())
	}
	t.Cleanup(func() { _ = c.Delete(ctx, np); _ = c.Delete(ctx, class) })
	sc := &scenario{t: t, g: g, ns: ns, class: class, np: np,
		guard: invariants.New(invariants.Options{Reservations: s.slots, PendingBound: pendingBound})}
	// Registered before Watch, so it runs after the watch has stopped.
	t.Cleanup(sc.report)
	sc.guard.Watch(t, cluster.Config, cluster.Scheme, ns, np.Name)
	t.Cleanup(sc.explainFailure)
	return sc
}

// report logs what the checker saw: NodeClaims created and deleted,
// violations, the longest Pending pod.
func (s *scenario) report() {
	created, deleted := 0, 0
	for _, e := range s.guard.History() {
		switch e.Kind {
		case invariants.Created:
			created++
		case invariants.Deleting:
			deleted++
		}
	}
	longest, pod := s.guard.LongestPending()
	s.t.Logf("checker: %d NodeClaims created, %d deleted, %d violations, longest Pending %s (%s)",
		created, deleted, len(s.guard.Violations()), longest.Round(100*time.Millisecond), pod)
}

// explainFailure logs the NodePool's NodeClaims as they are when the test
// failed: their conditions say where a launch stopped.
func (s *scenario) explainFailure() {
	if !s.t.Failed() {
		return
	}
	for _, nc := range s.claims() {
		var conds []string
		for _, c := range nc.Status.Conditions {
			conds = append(conds, fmt.Sprintf("%s=%s %s %q", c.Type, c.Status, c.Reason, c.Message))
		}
		s.t.Logf("nodeclaim %s: providerID %q, node %q, labels %v, conditions %v", nc.Name, nc.Status.ProviderID, nc.Status.NodeName, nc.Labels, conds)
	}
}

// ready waits for the EC2NodeClass to be Ready and returns it.
func (s *scenario) ready() *awsv1.EC2NodeClass {
	got := &awsv1.EC2NodeClass{}
	s.g.Eventually(func(g gomega.Gomega) {
		g.Expect(cluster.Client.Get(context.Background(), client.ObjectKeyFromObject(s.class), got)).To(gomega.Succeed())
		cond := meta.FindStatusCondition(got.Status.Conditions, awsv1.ConditionTypeReady)
		g.Expect(cond).NotTo(gomega.BeNil(), "no Ready condition yet")
		g.Expect(cond.Status).To(gomega.Equal(metav1.ConditionTrue), "%s: %s", cond.Reason, cond.Message)
	}).Should(gomega.Succeed())
	return got
}

// spreadOut is a Deployment whose pods need a node each (hostname
// anti-affinity) and tolerate the scenario's taint.
func (s *scenario) spreadOut(replicas int32) *appsv1.Deployment {
	return s.spreadOutWith(replicas, nil)
}

// spreadOutWith is spreadOut with pods that also request (and, for
// extended resources, limit) more.
func (s *scenario) spreadOutWith(replicas int32, more corev1.ResourceList) *appsv1.Deployment {
	labels := map[string]string{"app": "spread"}
	pod := test.Pod(s.ns, func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("512Mi")}
		for name, q := range more {
			p.Spec.Containers[0].Resources.Requests[name] = q
			if !strings.Contains(string(name), "/") {
				continue
			}
			// Extended resources are not overcommitted: limits equal
			// requests.
			if p.Spec.Containers[0].Resources.Limits == nil {
				p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{}
			}
			p.Spec.Containers[0].Resources.Limits[name] = q
		}
		p.Spec.Tolerations = []corev1.Toleration{{Key: "scenario", Operator: corev1.TolerationOpEqual, Value: s.ns, Effect: corev1.TaintEffectNoSchedule}}
		p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](0)
		p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			TopologyKey: corev1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: labels}}}}}
	})
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "spread", Namespace: s.ns},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: pod.Spec}},
	}
	s.g.Expect(cluster.Client.Create(context.Background(), d)).To(gomega.Succeed())
	return d
}

// claims are the NodePool's NodeClaims.
func (s *scenario) claims() []v1.NodeClaim { return test.NodeClaimsOf(cluster.Client, s.np.Name) }

// running are the scenario's Running pods.
func (s *scenario) running() []corev1.Pod { return test.RunningPods(cluster.Client, s.ns) }

// settled waits until replicas pods run, each on a node of its own, and
// the NodePool has exactly one launched NodeClaim per pod: as many as the
// plan calls for, none of them empty. It returns the NodeClaims.
func (s *scenario) settled(replicas int) []v1.NodeClaim {
	var claims []v1.NodeClaim
	s.g.Eventually(func(g gomega.Gomega) {
		pods := s.running()
		g.Expect(pods).To(gomega.HaveLen(replicas))
		claims = s.claims()
		g.Expect(claims).To(gomega.HaveLen(replicas), "one NodeClaim per pod")
		onNode := map[string]int{}
		for _, p := range pods {
			onNode[p.Spec.NodeName]++
		}
		for _, nc := range claims {
			g.Expect(nc.DeletionTimestamp).To(gomega.BeNil(), "nodeclaim %s is being deleted", nc.Name)
			g.Expect(nc.Status.NodeName).NotTo(gomega.BeEmpty(), "nodeclaim %s has no node", nc.Name)
			g.Expect(onNode[nc.Status.NodeName]).To(gomega.Equal(1), "nodeclaim %s's node %s runs %d of the pods", nc.Name, nc.Status.NodeName, onNode[nc.Status.NodeName])
		}
	}).WithTimeout(90 * time.Second).Should(gomega.Succeed())
	// No extra NodeClaim comes late.
	s.g.Consistently(func(g gomega.Gomega) {
		g.Expect(s.claims()).To(gomega.HaveLen(replicas))
	}).WithTimeout(3 * time.Second).Should(gomega.Succeed())
	return claims
}

// launchedBy counts launched NodeClaims by "capacity-type/reservation".
func launchedBy(claims []v1.NodeClaim) map[string]int {
	out := map[string]int{}
	for _, nc := range claims {
		if nc.Status.NodeName != "" && nc.DeletionTimestamp == nil {
			out[nc.Labels[v1.CapacityTypeLabelKey]+"/"+nc.Labels[v1.LabelCapacityReservationID]]++
		}
	}
	return out
}

// launchFailures are the messages of the InsufficientCapacity events on
// the NodePool's NodeClaims, which name each failed offering and its
// code.
func (s *scenario) launchFailures(g gomega.Gomega) []string {
	events := &corev1.EventList{}
	g.Expect(cluster.Client.List(context.Background(), events)).To(gomega.Succeed())
	var out []string
	for _, e := range events.Items {
		if e.Reason == "InsufficientCapacity" && e.InvolvedObject.Kind == "NodeClaim" && strings.HasPrefix(e.InvolvedObject.Name, s.np.Name+"-") {
			out = append(out, e.Message)
		}
	}
	return out
}

// instanceID is the EC2 instance id of a provider id aws:///<zone>/<id>.
func instanceID(providerID string) string {
	return providerID[strings.LastIndex(providerID, "/")+1:]
}

// instances describes the instances with ids, by id, in the endpoint.
func instances(g gomega.Gomega, ids ...string) map[string]ec2types.Instance {
	out, err := api.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{InstanceIds: ids})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	got := map[string]ec2types.Instance{}
	for _, r := range out.Reservations {
		for _, inst := range r.Instances {
			got[awssdk.ToString(inst.InstanceId)] = inst
		}
	}
	return got
}

// allInstances are every instance the endpoint has launched, terminated
// ones included.
func allInstances(ctx context.Context) ([]ec2types.Instance, error) {
	var all []ec2types.Instance
	pages := ec2.NewDescribeInstancesPaginator(api, &ec2.DescribeInstancesInput{})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, r := range page.Reservations {
			all = append(all, r.Instances...)
		}
	}
	return all, nil
}

func tagsOf(inst ec2types.Instance) map[string]string {
	out := map[string]string{}
	for _, t := range inst.Tags {
		out[awssdk.ToString(t.Key)] = awssdk.ToString(t.Value)
	}
	return out
}

func state(inst ec2types.Instance) ec2types.InstanceStateName {
	if inst.State == nil {
		return ""
	}
	return inst.State.Name
}

// zoneIDs are the endpoint's zone IDs by zone name.
func zoneIDs(g gomega.Gomega) map[string]string {
	out, err := api.DescribeAvailabilityZones(context.Background(), &ec2.DescribeAvailabilityZonesInput{})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	ids := map[string]string{}
	for _, z := range out.AvailabilityZones {
		ids[awssdk.ToString(z.ZoneName)] = awssdk.ToString(z.ZoneId)
	}
	return ids
}

// node is a Node by name, nil if it does not exist.
func node(name string) *corev1.Node {
	n := &corev1.Node{}
	if err := cluster.Client.Get(context.Background(), client.ObjectKey{Name: name}, n); err != nil {
		return nil
	}
	return n
}

// nodesOf are the Nodes whose provider id names one of ids.
func nodesOf(g gomega.Gomega, ids ...string) []corev1.Node {
	nodes := &corev1.NodeList{}
	g.Expect(cluster.Client.List(context.Background(), nodes)).To(gomega.Succeed())
	return slices.DeleteFunc(nodes.Items, func(n corev1.Node) bool {
		return n.Spec.ProviderID == "" || !slices.Contains(ids, instanceID(n.Spec.ProviderID))
	})
}

// launchOutside launches count instances of type it in subnet with the
// administrator's credentials, as someone other than Capstan would: an
// instant fleet of ami with tags, no user data (no Node joins).
func (s *scenario) launchOutside(ami string, it ec2types.InstanceType, subnet string, ct ec2types.DefaultTargetCapacityType, count int32, tags []ec2types.Tag) []string {
	ctx := context.Background()
	lt, err := api.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{
		LaunchTemplateName: awssdk.String(test.RandomName("outside")),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: awssdk.String(ami), SecurityGroupIds: securityGroups},
	})
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	in := &ec2.CreateFleetInput{
		Type: ec2types.FleetTypeInstant,
		LaunchTemplateConfigs: []ec2types.FleetLaunchTemplateConfigRequest{{
			LaunchTemplateSpecification: &ec2types.FleetLaunchTemplateSpecificationRequest{LaunchTemplateId: lt.LaunchTemplate.LaunchTemplateId, Version: awssdk.String("$Latest")},
			Overrides:                   []ec2types.FleetLaunchTemplateOverridesRequest{{InstanceType: it, SubnetId: awssdk.String(subnet)}},
		}},
		TargetCapacitySpecification: &ec2types.TargetCapacitySpecificationRequest{TotalTargetCapacity: awssdk.Int32(count), DefaultTargetCapacityType: ct},
		TagSpecifications:           []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeInstance, Tags: tags}},
	}
	if ct == ec2types.DefaultTargetCapacityTypeSpot {
		in.SpotOptions = &ec2types.SpotOptionsRequest{AllocationStrategy: ec2types.SpotAllocationStrategyPriceCapacityOptimized}
	}
	out, err := api.CreateFleet(ctx, in)
	s.g.Expect(err).NotTo(gomega.HaveOccurred())
	var ids []string
	for _, i := range out.Instances {
		ids = append(ids, i.InstanceIds...)
	}
	s.g.Expect(ids).To(gomega.HaveLen(int(count)), "fleet errors: %v", out.Errors)
	return ids
}
