package simulator

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/flavors"
	"github.com/capstan-dev/capstan/pkg/manifests"
	"github.com/capstan-dev/capstan/pkg/state"
)

// world is the in-memory cluster: what the API server holds in a real
// one. Maps are keyed by name (namespace/name for namespaced objects) and
// always read in sorted order, so a run is deterministic.
type world struct {
	pods        map[string]*corev1.Pod
	nodes       map[string]*corev1.Node
	claims      map[string]*v1.NodeClaim
	nodePools   []v1.NodePool
	nodeClasses map[string]*simv1alpha1.SimNodeClass
	models      map[string]*flavors.OpenModel
	namespaces  map[string]corev1.Namespace
	daemonSets  []appsv1.DaemonSet
	claimsPVC   []corev1.PersistentVolumeClaim
	volumes     []corev1.PersistentVolume
	classes     []storagev1.StorageClass
	workloads   []*workload
	// seq orders pods by creation, as the scheduler's queue does.
	seq      int
	podOrder map[string]int
	// version counts changes to pods and nodes, so binding runs only when
	// there may be something new to bind.
	version int
}

func (w *world) changed() { w.version++ }

func newWorld(set *manifests.Set) *world {
	w := &world{
		pods: map[string]*corev1.Pod{}, nodes: map[string]*corev1.Node{}, claims: map[string]*v1.NodeClaim{},
		nodeClasses: map[string]*simv1alpha1.SimNodeClass{}, models: map[string]*flavors.OpenModel{},
		namespaces: map[string]corev1.Namespace{}, podOrder: map[string]int{},
		nodePools: slices.Clone(set.NodePools), daemonSets: slices.Clone(set.DaemonSets),
		claimsPVC: slices.Clone(set.PersistentVolumeClaims), volumes: slices.Clone(set.PersistentVolumes),
		classes: slices.Clone(set.StorageClasses),
	}
	for i := range set.SimNodeClasses {
		w.nodeClasses[set.SimNodeClasses[i].Name] = &set.SimNodeClasses[i]
	}
	for _, m := range set.OpenModels {
		w.models[m.Name] = m
	}
	for _, ns := range set.Namespaces {
		w.namespaces[ns.Name] = ns
	}
	w.workloads = workloadsOf(set)
	return w
}

// SimNodeClass implements sim.NodeClasses over the manifests.
func (w *world) SimNodeClass(_ context.Context, name string) (*simv1alpha1.SimNodeClass, error) {
	nc, ok := w.nodeClasses[name]
	if !ok {
		return nil, fmt.Errorf("simnodeclass %s is not in the manifests", name)
	}
	return nc, nil
}

// model looks OpenModels up for flavor resolution; without any OpenModel
// in the manifests llmaz counts as not installed, as in a cluster
// without its CRD.
func (w *world) model(_ context.Context, name string) (*flavors.OpenModel, bool, error) {
	if len(w.models) == 0 {
		return nil, false, nil
	}
	m, ok := w.models[name]
	if !ok {
		return nil, true, fmt.Errorf("openmodel %s is not in the manifests", name)
	}
	return m, true, nil
}

func podKey(p *corev1.Pod) string { return p.Namespace + "/" + p.Name }

// addPod creates a pod as the API server does: requests defaulted from
// limits, the default scheduler.
func (w *world) addPod(p *corev1.Pod) {
	manifests.DefaultRequests(&p.Spec)
	if p.Spec.SchedulerName == "" {
		p.Spec.SchedulerName = corev1.DefaultSchedulerName
	}
	w.seq++
	w.podOrder[podKey(p)] = w.seq
	w.pods[podKey(p)] = p
	w.changed()
	if _, ok := w.namespaces[p.Namespace]; !ok {
		ns := corev1.Namespace{}
		ns.Name = p.Namespace
		ns.Labels = map[string]string{corev1.LabelMetadataName: p.Namespace}
		w.namespaces[p.Namespace] = ns
	}
}

func (w *world) deletePod(p *corev1.Pod) {
	delete(w.pods, podKey(p))
	delete(w.podOrder, podKey(p))
	w.changed()
}

// sortedPods are the pods in creation order.
func (w *world) sortedPods() []*corev1.Pod {
	return w.podsWhere(func(*corev1.Pod) bool { return true })
}

// podsWhere are the pods keep accepts, in creation order.
func (w *world) podsWhere(keep func(*corev1.Pod) bool) []*corev1.Pod {
	type entry struct {
		seq int
		pod *corev1.Pod
	}
	entries := make([]entry, 0, len(w.pods))
	for key, p := range w.pods {
		if keep(p) {
			entries = append(entries, entry{w.podOrder[key], p})
		}
	}
	slices.SortFunc(entries, func(a, b entry) int { return cmp.Compare(a.seq, b.seq) })
	out := make([]*corev1.Pod, len(entries))
	for i, e := range entries {
		out[i] = e.pod
	}
	return out
}

func (w *world) sortedNodes() []*corev1.Node {
	return sortedValues(w.nodes)
}

func (w *world) sortedClaims() []*v1.NodeClaim {
	return sortedValues(w.claims)
}

func sortedValues[T any](m map[string]*T) []*T {
	out := make([]*T, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[k])
	}
	return out
}

// podsOn are the pods bound to a node.
func (w *world) podsOn(node string) []*corev1.Pod {
	return w.podsWhere(func(p *corev1.Pod) bool { return p.Spec.NodeName == node })
}

// nodeOf finds the Node of a NodeClaim by provider id.
func (w *world) nodeOf(nc *v1.NodeClaim) *corev1.Node {
	if nc.Status.ProviderID == "" {
		return nil
	}
	for _, n := range w.sortedNodes() {
		if n.Spec.ProviderID == nc.Status.ProviderID {
			return n
		}
	}
	return nil
}

// objects is the world as the provisioner lists it from the API server.
func (w *world) objects() state.Objects {
	objs := state.Objects{
		NodePools: w.nodePools, DaemonSets: w.daemonSets,
		Claims: w.claimsPVC, Volumes: w.volumes, StorageClasses: w.classes,
	}
	for _, p := range w.sortedPods() {
		objs.Pods = append(objs.Pods, *p)
	}
	for _, n := range w.sortedNodes() {
		objs.Nodes = append(objs.Nodes, *n)
	}
	for _, nc := range w.sortedClaims() {
		objs.NodeClaims = append(objs.NodeClaims, *nc)
	}
	for _, name := range slices.Sorted(maps.Keys(w.namespaces)) {
		objs.Namespaces = append(objs.Namespaces, w.namespaces[name])
	}
	return objs
}
