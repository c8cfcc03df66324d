package simulator

import (
	"fmt"

	autoscalingv1 "k8s.io/autoscaler/cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	autoscalingv1beta1 "github.com/capstan-dev/capstan/api/autoscaling/v1beta1"
	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/api/v1alpha1"
	"github.com/capstan-dev/capstan/pkg/flavors"
	"github.com/capstan-dev/capstan/pkg/manifests"
)

// timed applies the manifests' timed changes that are due (the
// simulate.capstan.dev/apply-at and delete-at annotations), each recorded
// as an Applied or Deleted event. They are applied as kubectl would
// apply them, and the cluster reacts as it would: the provisioner is
// triggered by a NodePool change, a workload's controller rolls its pods
// to a new template (rollout.go), deleting a workload deletes its pods.
func (s *Simulator) timed() bool {
	now := s.clock.Now()
	changed := false
	for len(s.world.timeline) > 0 && !s.start.Add(s.world.timeline[0].At).After(now) {
		t := s.world.timeline[0]
		s.world.timeline = s.world.timeline[1:]
		if t.Delete {
			s.rec.event(now, "Deleted", t.Ref(), s.remove(t))
		} else {
			s.rec.event(now, "Applied", t.Ref(), s.apply(t))
		}
		if t.Kind == "NodePool" || t.Kind == "NodeOverlay" || t.Kind == "CapacityBuffer" || t.Kind == "PodTemplate" {
			s.batch.Trigger(now, false)
		}
		s.world.changed()
		changed = true
	}
	return changed
}

// apply creates the object, or replaces the one of its kind, namespace
// and name, and says which (with the source) for the event.
func (s *Simulator) apply(t manifests.TimedObject) string {
	w := s.world
	var replaced bool
	var note string
	switch o := t.Object.(type) {
	case *v1.NodePool:
		w.nodePools, replaced = upsert(w.nodePools, *o.DeepCopy())
	case *v1alpha1.NodeOverlay:
		w.overlays, replaced = upsert(w.overlays, *o.DeepCopy())
	case *autoscalingv1beta1.CapacityBuffer:
		w.buffers, replaced = upsert(w.buffers, *o.DeepCopy())
	case *corev1.PodTemplate:
		w.podTemplates, replaced = upsert(w.podTemplates, *o.DeepCopy())
	case *simv1alpha1.SimNodeClass:
		_, replaced = w.nodeClasses[o.Name]
		w.nodeClasses[o.Name] = o.DeepCopy()
	case *corev1.Namespace:
		_, replaced = w.namespaces[o.Name]
		w.namespaces[o.Name] = *o.DeepCopy()
	case *corev1.Pod:
		// A pod's spec cannot change in place: a new version replaces it,
		// as kubectl replace --force does.
		if old := w.pods[podKey(o)]; old != nil {
			w.deletePod(old)
			replaced = true
		}
		w.addPod(o.DeepCopy())
	case *appsv1.Deployment:
		replaced, note = s.applyWorkload(workloadsOf(&manifests.Set{Deployments: []appsv1.Deployment{*o.DeepCopy()}})[0], rolloutOf(o))
	case *appsv1.ReplicaSet:
		replaced, note = s.applyWorkload(workloadsOf(&manifests.Set{ReplicaSets: []appsv1.ReplicaSet{*o.DeepCopy()}})[0], nil)
	case *appsv1.StatefulSet:
		replaced, note = s.applyWorkload(workloadsOf(&manifests.Set{StatefulSets: []appsv1.StatefulSet{*o.DeepCopy()}})[0], rolloutOf(o))
	case *batchv1.Job:
		replaced, note = s.applyWorkload(workloadsOf(&manifests.Set{Jobs: []batchv1.Job{*o.DeepCopy()}})[0], nil)
	case *appsv1.DaemonSet:
		replaced, note = s.applyDaemonSet(o.DeepCopy())
	case *policyv1.PodDisruptionBudget:
		w.pdbs, replaced = upsert(w.pdbs, *o.DeepCopy())
	case *corev1.PersistentVolumeClaim:
		w.claimsPVC, replaced = upsert(w.claimsPVC, *o.DeepCopy())
	case *corev1.PersistentVolume:
		w.volumes, replaced = upsert(w.volumes, *o.DeepCopy())
	case *storagev1.StorageClass:
		w.classes, replaced = upsert(w.classes, *o.DeepCopy())
	case *flavors.OpenModel:
		_, replaced = w.models[o.Name]
		w.models[o.Name] = o
	case *autoscalingv1.ProvisioningRequest:
		pr := o.DeepCopy()
		pr.CreationTimestamp = metav1.NewTime(s.clock.Now())
		w.provreqs, replaced = upsert(w.provreqs, *pr)
	case *unstructured.Unstructured:
		w.podGroups, replaced = upsert(w.podGroups, *o.DeepCopy())
		// A gang's min count changed: its pods are planned again.
		s.batch.Trigger(s.clock.Now(), false)
	default:
		return fmt.Sprintf("not applied: simulate does not change %T mid-run (%s)", t.Object, t.Source)
	}
	verb := "created"
	if replaced {
		verb = "replaced"
	}
	return withNote(fmt.Sprintf("%s (%s)", verb, t.Source), note)
}

// remove deletes the object of t's kind, namespace and name and says
// what went with it, for the event. A NodePool's deletion cascades to
// its NodeClaims, as its owner references make it in a cluster: each is
// deleted and terminated gracefully (drained first).
func (s *Simulator) remove(t manifests.TimedObject) string {
	w := s.world
	var found bool
	var note string
	switch t.Object.(type) {
	case *v1.NodePool:
		w.nodePools, found = without(w.nodePools, t.Namespace, t.Name)
		claims := 0
		for _, nc := range w.sortedClaims() {
			if found && nc.Labels[v1.NodePoolLabelKey] == t.Name && nc.DeletionTimestamp == nil {
				s.deleteClaim(nc, s.clock.Now())
				claims++
			}
		}
		if claims > 0 {
			note = fmt.Sprintf("its %d NodeClaim(s) are deleted with it", claims)
		}
	case *v1alpha1.NodeOverlay:
		w.overlays, found = without(w.overlays, t.Namespace, t.Name)
	case *autoscalingv1beta1.CapacityBuffer:
		w.buffers, found = without(w.buffers, t.Namespace, t.Name)
	case *corev1.PodTemplate:
		w.podTemplates, found = without(w.podTemplates, t.Namespace, t.Name)
	case *simv1alpha1.SimNodeClass:
		_, found = w.nodeClasses[t.Name]
		delete(w.nodeClasses, t.Name)
	case *corev1.Pod:
		var p *corev1.Pod
		if p, found = w.pods[t.Namespace+"/"+t.Name]; found {
			w.deletePod(p)
		}
	case *appsv1.Deployment, *appsv1.ReplicaSet, *appsv1.StatefulSet, *batchv1.Job:
		found, note = s.removeWorkload(t.Kind, t.Namespace, t.Name)
	case *appsv1.DaemonSet:
		w.daemonSets, found = without(w.daemonSets, t.Namespace, t.Name)
		if n := s.deleteDaemonSetPods(t.Namespace, t.Name); n > 0 {
			note = fmt.Sprintf("%d pod(s) deleted", n)
		}
	case *policyv1.PodDisruptionBudget:
		w.pdbs, found = without(w.pdbs, t.Namespace, t.Name)
	case *corev1.PersistentVolumeClaim:
		w.claimsPVC, found = without(w.claimsPVC, t.Namespace, t.Name)
	case *corev1.PersistentVolume:
		w.volumes, found = without(w.volumes, t.Namespace, t.Name)
	case *storagev1.StorageClass:
		w.classes, found = without(w.classes, t.Namespace, t.Name)
	case *flavors.OpenModel:
		_, found = w.models[t.Name]
		delete(w.models, t.Name)
	case *autoscalingv1.ProvisioningRequest:
		w.provreqs, found = without(w.provreqs, t.Namespace, t.Name)
	case *unstructured.Unstructured:
		w.podGroups, found = without(w.podGroups, t.Namespace, t.Name)
	default:
		return fmt.Sprintf("not deleted: simulate does not change %T mid-run (%s)", t.Object, t.Source)
	}
	if !found {
		return fmt.Sprintf("not found, nothing to delete (%s)", t.Source)
	}
	return withNote(fmt.Sprintf("deleted (%s)", t.Source), note)
}

func withNote(message, note string) string {
	if note == "" {
		return message
	}
	return message + "; " + note
}

// applyWorkload creates the workload, or updates the one there as its
// controller takes a new version (workload.update).
func (s *Simulator) applyWorkload(next *workload, strategy *rollout) (bool, string) {
	for _, wl := range s.world.workloads {
		if wl.kind == next.kind && wl.namespace == next.namespace && wl.name == next.name {
			return true, wl.update(s.world, next, strategy)
		}
	}
	s.world.workloads = append(s.world.workloads, next)
	return false, ""
}

// removeWorkload deletes a workload and its pods, as garbage collection
// does once its owner is gone (at once: grace periods are not simulated).
// A StatefulSet's claims stay, as they do in a cluster.
func (s *Simulator) removeWorkload(kind, namespace, name string) (bool, string) {
	for i, wl := range s.world.workloads {
		if wl.kind != kind || wl.namespace != namespace || wl.name != name {
			continue
		}
		n := 0
		for _, p := range s.world.sortedPods() {
			if wl.pods[podKey(p)] {
				s.world.deletePod(p)
				n++
			}
		}
		s.world.workloads = append(s.world.workloads[:i:i], s.world.workloads[i+1:]...)
		return true, fmt.Sprintf("%d pod(s) deleted", n)
	}
	return false, ""
}

// applyDaemonSet creates or replaces a DaemonSet. A new template replaces
// every pod (the daemonSets step runs the new ones at once, so a rolling
// update, one node at a time, is over within the instant).
func (s *Simulator) applyDaemonSet(ds *appsv1.DaemonSet) (bool, string) {
	w := s.world
	for _, old := range w.daemonSets {
		if old.Namespace != ds.Namespace || old.Name != ds.Name {
			continue
		}
		note := ""
		if !apiequality.Semantic.DeepEqual(old.Spec.Template, ds.Spec.Template) {
			note = fmt.Sprintf("%d pod(s) replaced by the new template", s.deleteDaemonSetPods(ds.Namespace, ds.Name))
		}
		w.daemonSets, _ = upsert(w.daemonSets, *ds)
		return true, note
	}
	w.daemonSets, _ = upsert(w.daemonSets, *ds)
	return false, ""
}

// deleteDaemonSetPods deletes the pods a DaemonSet owns and counts them.
func (s *Simulator) deleteDaemonSetPods(namespace, name string) int {
	n := 0
	for _, p := range s.world.sortedPods() {
		if ref := metav1.GetControllerOf(p); p.Namespace == namespace && ref != nil && ref.Kind == "DaemonSet" && ref.Name == name {
			s.world.deletePod(p)
			n++
		}
	}
	return n
}

// upsert replaces the object with obj's namespace and name in list, or
// appends it. The list is copied: snapshots may still hold the old one.
func upsert[T any, P interface {
	*T
	metav1.Object
}](list []T, obj T) ([]T, bool) {
	out := append([]T(nil), list...)
	for i := range out {
		if P(&out[i]).GetNamespace() == P(&obj).GetNamespace() && P(&out[i]).GetName() == P(&obj).GetName() {
			out[i] = obj
			return out, true
		}
	}
	return append(out, obj), false
}

// without is list less the object of that namespace and name, copied.
func without[T any, P interface {
	*T
	metav1.Object
}](list []T, namespace, name string) ([]T, bool) {
	out := make([]T, 0, len(list))
	for i := range list {
		if P(&list[i]).GetNamespace() != namespace || P(&list[i]).GetName() != name {
			out = append(out, list[i])
		}
	}
	return out, len(out) < len(list)
}

// hasTimed reports whether the timeline applies an object of type T.
func hasTimed[T any](timeline []manifests.TimedObject) bool {
	for _, t := range timeline {
		if _, ok := t.Object.(T); ok && !t.Delete {
			return true
		}
	}
	return false
}
