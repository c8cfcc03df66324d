package parity

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/manifests"
	"github.com/capstan-dev/capstan/pkg/test"
)

var origin = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// objects are an e2e scenario's: a SimNodeClass, a NodePool of m5.large
// on-demand and a Deployment of replicas one-CPU pods, each on a node of
// its own.
func objects(replicas int32) (client.Object, *v1.NodePool, *appsv1.Deployment) {
	snc := test.SimNodeClass()
	np := test.NodePool(func(np *v1.NodePool) {
		np.Spec.Template.Spec.NodeClassRef.Name = snc.Name
		np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{
			{Key: v1.LabelInstanceType, Operator: corev1.NodeSelectorOpIn, Values: []string{"m5.large"}},
			{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{v1.CapacityTypeOnDemand}},
			{Key: v1.LabelZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"us-west-2a"}},
		}
		np.Spec.Disruption.ConsolidateAfter = v1.MustParseNillableDuration("0s")
	})
	labels := map[string]string{"app": "web"}
	pod := test.Pod("parity", func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")}
		p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: labels}, TopologyKey: corev1.LabelHostname}}}}
	})
	deploy := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "parity"}, Spec: appsv1.DeploymentSpec{
		Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: pod.Spec}}}
	return snc, np, deploy
}

// started is a script on a fake clock at origin that has applied
// objects(replicas).
func started(t *testing.T, replicas int32) (*clocktesting.FakeClock, *Script, *v1.NodePool, *appsv1.Deployment) {
	t.Helper()
	clk := clocktesting.NewFakeClock(origin)
	s, err := NewScript(clk)
	if err != nil {
		t.Fatal(err)
	}
	snc, np, deploy := objects(replicas)
	if err := s.Apply(snc, np, deploy); err != nil {
		t.Fatal(err)
	}
	return clk, s, np, deploy
}

// A script holds each version at its offset and its deletion, as simulate
// reads them.
func TestScriptTimesVersions(t *testing.T) {
	clk, s, np, deploy := started(t, 2)
	clk.Step(90 * time.Second)
	deploy.Spec.Replicas = ptr.To[int32](3)
	if err := s.Apply(deploy); err != nil {
		t.Fatal(err)
	}
	deploy.Spec.Replicas = ptr.To[int32](4) // the same instant: replaces the last version
	if err := s.Apply(deploy); err != nil {
		t.Fatal(err)
	}
	clk.Step(time.Second)
	if err := s.Delete(np); err != nil {
		t.Fatal(err)
	}
	data, err := s.YAML(origin)
	if err != nil {
		t.Fatal(err)
	}
	set := &manifests.Set{}
	if err := manifests.Read("script", data, set); err != nil {
		t.Fatalf("simulate refuses the script: %v\n%s", err, data)
	}
	var got []string
	for _, tm := range set.Timed {
		got = append(got, tm.At.String()+" "+map[bool]string{true: "delete", false: "apply"}[tm.Delete]+" "+tm.Ref())
	}
	want := []string{"1m30s apply deployment/parity/web", "1m31s delete nodepool/" + np.Name}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("timeline (-want +got):\n%s", diff)
	}
	if len(set.NodePools) != 1 || len(set.Deployments) != 1 || len(set.SimNodeClasses) != 1 {
		t.Errorf("applied at the start: %d NodePools, %d Deployments, %d SimNodeClasses; want one each", len(set.NodePools), len(set.Deployments), len(set.SimNodeClasses))
	}
	if r := *set.Timed[0].Object.(*appsv1.Deployment).Spec.Replicas; r != 4 {
		t.Errorf("the version at 1m30s has %d replicas, want the last applied, 4", r)
	}
}

// Simulate runs the script with the controller's flags simulate knows
// (dropping the others), and FromResult reduces its outcome: here a
// scale-down whose emptied node consolidation deletes.
func TestSimulateScaleDown(t *testing.T) {
	clk, s, np, deploy := started(t, 3)
	clk.Step(time.Minute)
	deploy.Spec.Replicas = ptr.To[int32](2)
	if err := s.Apply(deploy); err != nil {
		t.Fatal(err)
	}
	clk.Step(2 * time.Minute)
	args := []string{"--gc-interval=5s", "--batch-idle-duration=500ms", "--disruption-poll-interval=1s", "--disruption-validation-delay=2s"}
	result, err := Simulate(context.Background(), s, origin, args, s.Elapsed(origin), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	want := Outcome{
		Nodes:     []string{"m5.large/us-west-2a/on-demand", "m5.large/us-west-2a/on-demand"},
		Deletions: []string{"m5.large/us-west-2a/on-demand: Empty"},
		Running:   2,
	}
	if diff := cmp.Diff(want, FromResult(result, np.Name)); diff != "" {
		t.Errorf("outcome (-want +got):\n%s", diff)
	}
	if _, err := Simulate(context.Background(), s, origin, []string{"--batch-idle-duration=soon"}, time.Minute, t.TempDir()); err == nil || !strings.Contains(err.Error(), "batch-idle-duration") {
		t.Errorf("a bad shared flag: %v, want simulate's error naming it", err)
	}
}

func claim(name, instanceType, capacityType, provider string, mods ...func(*v1.NodeClaim)) *v1.NodeClaim {
	nc := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
		v1.LabelInstanceType: instanceType, v1.LabelZone: "us-west-2a", v1.CapacityTypeLabelKey: capacityType}}}
	nc.Status.ProviderID = provider
	for _, m := range mods {
		m(nc)
	}
	return nc
}

func deleting(reason string) func(*v1.NodeClaim) {
	return func(nc *v1.NodeClaim) {
		nc.DeletionTimestamp = &metav1.Time{Time: origin}
		if reason != "" {
			nc.Status.Conditions = []metav1.Condition{{Type: v1.ConditionTypeDisruptionReason, Status: metav1.ConditionTrue, Reason: reason}}
		}
	}
}

// The cluster's outcome: launched NodeClaims only, the live ones as
// nodes, the deleting or gone ones as deletions with their reason.
func TestFromClaims(t *testing.T) {
	claims := []*v1.NodeClaim{
		claim("a", "m5.large", "spot", "sim://a", func(nc *v1.NodeClaim) { nc.Labels[v1.LabelCapacityReservationID] = "cr-1" }),
		claim("b", "m5.large", "spot", ""),
		claim("c", "m5.xlarge", "on-demand", "sim://c", deleting("Drifted")),
		claim("d", "m5.xlarge", "on-demand", "sim://d"),
		claim("e", "m5.xlarge", "on-demand", "sim://e", deleting("")),
	}
	got := FromClaims(claims, map[string]bool{"d": true}, 3)
	want := Outcome{
		Nodes: []string{"m5.large/us-west-2a/spot/cr-1"},
		Deletions: []string{"m5.xlarge/us-west-2a/on-demand: Deleted", "m5.xlarge/us-west-2a/on-demand: Deleted",
			"m5.xlarge/us-west-2a/on-demand: Drifted"},
		Running: 3,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outcome (-want +got):\n%s", diff)
	}
}

// Known differences take only what they name out of the comparison.
func TestDiff(t *testing.T) {
	cluster := Outcome{Nodes: []string{"m5.large/us-west-2a/spot"}, Deletions: []string{"m5.large/us-west-2b/spot: Empty"}, Running: 1}
	zones := Outcome{Nodes: []string{"m5.large/us-west-2c/spot"}, Deletions: []string{"m5.large/us-west-2a/spot: Empty"}, Running: 1}
	reasons := Outcome{Nodes: []string{"m5.large/us-west-2a/spot"}, Deletions: []string{"m5.large/us-west-2b/spot: Underutilized"}, Running: 1}
	for _, tc := range []struct {
		name      string
		simulated Outcome
		known     []Known
		agree     bool
	}{
		{name: "same", simulated: cluster, agree: true},
		{name: "zones", simulated: zones},
		{name: "zones ignored", simulated: zones, known: []Known{IgnoreZones("")}, agree: true},
		{name: "reasons, zones ignored", simulated: reasons, known: []Known{IgnoreZones("")}},
		{name: "reasons, deletions ignored", simulated: reasons, known: []Known{IgnoreDeletions("")}, agree: true},
		{name: "running", simulated: Outcome{Nodes: cluster.Nodes, Deletions: cluster.Deletions}, known: []Known{IgnoreZones(""), IgnoreDeletions("")}},
		{name: "nodes ignored", simulated: Outcome{Running: 1}, known: []Known{IgnoreNodes("")}, agree: true},
		{name: "running, nodes ignored", simulated: Outcome{}, known: []Known{IgnoreNodes("")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d := Diff(cluster, tc.simulated, tc.known...); (d == "") != tc.agree {
				t.Errorf("Diff = %q, want agreement %t", d, tc.agree)
			}
		})
	}
}
