package simulator

import (
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/capstan-dev/capstan/pkg/manifests"
)

// image is a template whose only change between versions is the image.
func image(name string) corev1.PodTemplateSpec {
	tmpl := template()
	tmpl.Spec.Containers[0].Image = name
	return tmpl
}

// bindAll binds every pending pod, as if nodes had room: the
// simulation's binder, reduced.
func bindAll(w *world) {
	for _, p := range w.sortedPods() {
		if p.Spec.NodeName == "" {
			w.bindPod(p, "node")
		}
	}
}

// images counts the world's pods by image and whether they run.
func images(w *world) map[string]int {
	out := map[string]int{}
	for _, p := range w.sortedPods() {
		state := "running"
		if p.Spec.NodeName == "" {
			state = "pending"
		}
		out[p.Spec.Containers[0].Image+" "+state]++
	}
	return out
}

// apply is a timed apply of obj into the world, through the simulator.
func apply(s *Simulator, obj any) string {
	return s.apply(manifests.TimedObject{Object: obj, Source: "x.yaml, document 2"})
}

func testSimulator(set *manifests.Set) *Simulator {
	s := &Simulator{world: newWorld(set), rng: rand.New(rand.NewPCG(1, 2))}
	for _, wl := range s.world.workloads {
		wl.reconcile(s.world, s.rng)
	}
	bindAll(s.world)
	return s
}

func objectMeta(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, Namespace: "ns"} }

// A Deployment's new template rolls out as the deployment controller
// does it: at most replicas + maxSurge pods, at least replicas −
// maxUnavailable running, old pods that do not run removed first.
func TestDeploymentRollingUpdate(t *testing.T) {
	deployment := func(img string, replicas int32) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: objectMeta("web"), Spec: appsv1.DeploymentSpec{Replicas: ptr.To(replicas), Template: image(img)}}
	}
	s := testSimulator(&manifests.Set{Deployments: []appsv1.Deployment{*deployment("v1", 4)}})
	web := s.world.workloads[0]
	oldOwner := web.owner.Name

	if msg := apply(s, deployment("v1", 4)); msg != "replaced (x.yaml, document 2)" || web.rollout != nil {
		t.Errorf("the same version again: %q, rollout %v", msg, web.rollout)
	}
	if msg := apply(s, deployment("v2", 4)); msg != "replaced (x.yaml, document 2); 4 pod(s) roll to the new template (RollingUpdate)" {
		t.Errorf("message %q", msg)
	}
	if web.owner.Name == oldOwner || web.hash == "" {
		t.Errorf("the new template kept ReplicaSet %s", web.owner.Name)
	}
	// 25% of 4: one surge pod, one unavailable.
	var steps []map[string]int
	for range 20 {
		created, deleted := web.reconcile(s.world, s.rng)
		if created+deleted > 0 {
			steps = append(steps, images(s.world))
		}
		running := images(s.world)["v1 running"] + images(s.world)["v2 running"]
		if total := len(s.world.pods); total > 5 || running < 3 {
			t.Fatalf("%d pods, %d running: beyond maxSurge or maxUnavailable", total, running)
		}
		bindAll(s.world)
	}
	want := []map[string]int{
		{"v1 running": 3, "v2 pending": 1},
		{"v1 running": 2, "v2 pending": 1, "v2 running": 1},
		{"v1 running": 1, "v2 pending": 1, "v2 running": 2},
		{"v2 pending": 1, "v2 running": 3},
	}
	if diff := cmp.Diff(want, steps); diff != "" {
		t.Errorf("rollout steps (-want +got):\n%s", diff)
	}
	if web.rollout != nil || images(s.world)["v2 running"] != 4 {
		t.Errorf("after the rollout: %v, rollout %v", images(s.world), web.rollout)
	}
	for _, p := range s.world.sortedPods() {
		if p.OwnerReferences[0].Name != web.owner.Name || p.Labels[appsv1.DefaultDeploymentUniqueLabelKey] != web.hash {
			t.Errorf("pod %s: owner %s, hash %s; want the new ReplicaSet's", p.Name, p.OwnerReferences[0].Name, p.Labels[appsv1.DefaultDeploymentUniqueLabelKey])
		}
	}
}

// Old pods that are not running go first (1 surge, 1 unavailable: of
// the one old pod that may go, the pending one), not the running one.
func TestDeploymentRollingUpdateRemovesPendingOldPodsFirst(t *testing.T) {
	one := intstr.FromInt32(1)
	d := &appsv1.Deployment{ObjectMeta: objectMeta("web"), Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2), Template: image("v1"),
		Strategy: appsv1.DeploymentStrategy{RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &one, MaxUnavailable: &one}}}}
	s := testSimulator(&manifests.Set{Deployments: []appsv1.Deployment{*d}})
	web := s.world.workloads[0]
	// One old pod lost its node and waits for another.
	p := s.world.sortedPods()[1]
	s.world.deletePod(p)
	p = p.DeepCopy()
	p.Spec.NodeName = ""
	s.world.addPod(p)
	d.Spec.Template = image("v2")
	apply(s, d)
	web.reconcile(s.world, s.rng)
	if diff := cmp.Diff(map[string]int{"v1 running": 1, "v2 pending": 1}, images(s.world)); diff != "" {
		t.Errorf("pods (-want +got):\n%s", diff)
	}
}

func TestDeploymentRecreate(t *testing.T) {
	d := &appsv1.Deployment{ObjectMeta: objectMeta("web"), Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](3), Template: image("v1"),
		Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}}}
	s := testSimulator(&manifests.Set{Deployments: []appsv1.Deployment{*d}})
	d.Spec.Template, d.Spec.Replicas = image("v2"), ptr.To[int32](2)
	if msg := apply(s, d); msg != "replaced (x.yaml, document 2); replicas 3 → 2; 3 pod(s) roll to the new template (Recreate)" {
		t.Errorf("message %q", msg)
	}
	created, deleted := s.world.workloads[0].reconcile(s.world, s.rng)
	if created != 2 || deleted != 3 || images(s.world)["v2 pending"] != 2 {
		t.Errorf("created %d, deleted %d: %v; want every old pod replaced at once", created, deleted, images(s.world))
	}
}

// A StatefulSet replaces its pods one at a time from the highest
// ordinal, each once every pod runs; a partition keeps the lower ones.
func TestStatefulSetRollingUpdate(t *testing.T) {
	ss := &appsv1.StatefulSet{ObjectMeta: objectMeta("db"), Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](3), Template: image("v1")}}
	s := testSimulator(&manifests.Set{StatefulSets: []appsv1.StatefulSet{*ss}})
	db := s.world.workloads[0]
	ss.Spec.Template = image("v2")
	ss.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr.To[int32](1)}
	apply(s, ss)
	var order []string
	for range 10 {
		before := map[string]string{}
		for _, p := range s.world.sortedPods() {
			before[p.Name] = p.Spec.Containers[0].Image
		}
		db.reconcile(s.world, s.rng)
		// Nothing moves while a pod is pending.
		if _, deleted := db.reconcile(s.world, s.rng); deleted > 0 {
			t.Fatal("a pod was replaced while another was pending")
		}
		for _, p := range s.world.sortedPods() {
			if before[p.Name] != p.Spec.Containers[0].Image {
				order = append(order, p.Name)
			}
		}
		bindAll(s.world)
	}
	if diff := cmp.Diff([]string{"db-2", "db-1"}, order); diff != "" {
		t.Errorf("replaced (-want +got):\n%s", diff)
	}
	if p := s.world.pods["ns/db-0"]; p.Spec.Containers[0].Image != "v1" {
		t.Error("db-0, below the partition, was replaced")
	}
	if db.rollout != nil {
		t.Error("the rollout did not end")
	}
}

// A ReplicaSet's or Job's running pods keep their template; the
// replicas change at once; OnDelete StatefulSets leave theirs.
func TestUpdatesThatLeaveRunningPods(t *testing.T) {
	set := &manifests.Set{
		ReplicaSets:  []appsv1.ReplicaSet{{ObjectMeta: objectMeta("rs"), Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](1), Template: image("v1")}}},
		Jobs:         []batchv1.Job{{ObjectMeta: objectMeta("job"), Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](1), Template: image("v1")}}},
		StatefulSets: []appsv1.StatefulSet{{ObjectMeta: objectMeta("db"), Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](1), Template: image("v1")}}},
	}
	s := testSimulator(set)
	rs, job, ss := set.ReplicaSets[0].DeepCopy(), set.Jobs[0].DeepCopy(), set.StatefulSets[0].DeepCopy()
	rs.Spec.Template, rs.Spec.Replicas = image("v2"), ptr.To[int32](2)
	job.Spec.Template, job.Spec.Parallelism = image("v2"), ptr.To[int32](2)
	ss.Spec.Template, ss.Spec.UpdateStrategy.Type = image("v2"), appsv1.OnDeleteStatefulSetStrategyType
	if msg := apply(s, rs); msg != "replaced (x.yaml, document 2); replicas 1 → 2; new pods get the new template" {
		t.Errorf("message %q", msg)
	}
	apply(s, job)
	apply(s, ss)
	for _, wl := range s.world.workloads {
		wl.reconcile(s.world, s.rng)
	}
	if diff := cmp.Diff(map[string]int{"v1 running": 3, "v2 pending": 2}, images(s.world)); diff != "" {
		t.Errorf("pods (-want +got):\n%s", diff)
	}
}

// Timed changes to each kind land in the world, and deletions take the
// workloads' and DaemonSets' pods with them.
func TestTimedChangesToTheWorld(t *testing.T) {
	d := appsv1.Deployment{ObjectMeta: objectMeta("web"), Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2), Template: image("v1")}}
	ds := appsv1.DaemonSet{ObjectMeta: objectMeta("logs"), Spec: appsv1.DaemonSetSpec{Template: image("v1")}}
	s := testSimulator(&manifests.Set{Deployments: []appsv1.Deployment{d}, DaemonSets: []appsv1.DaemonSet{ds}})
	logs := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "logs-x", Namespace: "ns", OwnerReferences: []metav1.OwnerReference{{Kind: "DaemonSet", Name: "logs", Controller: ptr.To(true)}}}, Spec: image("v1").Spec}
	logs.Spec.NodeName = "node"
	s.world.addPod(logs)

	ds.Spec.Template = image("v2")
	if msg := apply(s, &ds); msg != "replaced (x.yaml, document 2); 1 pod(s) replaced by the new template" || s.world.pods["ns/logs-x"] != nil {
		t.Errorf("the DaemonSet's new template: %q", msg)
	}
	if s.world.daemonSets[0].Spec.Template.Spec.Containers[0].Image != "v2" {
		t.Error("the DaemonSet was not replaced")
	}
	remove := func(kind string, obj any) string {
		return s.remove(manifests.TimedObject{Delete: true, Kind: kind, Namespace: "ns", Name: "web", Object: obj, Source: "x.yaml, document 3"})
	}
	if msg := remove("Deployment", &d); msg != "deleted (x.yaml, document 3); 2 pod(s) deleted" || len(s.world.workloads) != 0 || len(s.world.pods) != 0 {
		t.Errorf("deleting the Deployment: %q; %d workloads, %d pods left", msg, len(s.world.workloads), len(s.world.pods))
	}
	if msg := remove("Deployment", &d); msg != "not found, nothing to delete (x.yaml, document 3)" {
		t.Errorf("deleting it again: %q", msg)
	}
	pod := &corev1.Pod{ObjectMeta: objectMeta("web"), Spec: image("v1").Spec}
	if msg := apply(s, pod); msg != "created (x.yaml, document 2)" || s.world.pods["ns/web"] == nil {
		t.Errorf("a bare pod: %q", msg)
	}
	if msg := remove("Pod", pod); msg != "deleted (x.yaml, document 3)" || s.world.pods["ns/web"] != nil {
		t.Errorf("deleting the bare pod: %q", msg)
	}
	if len(s.world.pods) != 0 {
		t.Errorf("pods %v left", names(s.world))
	}
}
