package simulator

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/api/v1alpha1"
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
	overlays    []v1alpha1.NodeOverlay
	nodeClasses map[string]*simv1alpha1.SimNodeClass
	models      map[string]*flavors.OpenModel
	namespaces  map[string]corev1.Namespace
	daemonSets  []appsv1.DaemonSet
	claimsPVC   []corev1.PersistentVolumeClaim
	volumes     []corev1.PersistentVolume
	classes     []storagev1.StorageClass
	// podGroups are gangs' group objects (gang.Declare).
	podGroups []unstructured.Unstructured
	workloads []*workload
	// pdbs are the PodDisruptionBudgets, their status computed when read
	// (pdb.go).
	pdbs []policyv1.PodDisruptionBudget
	// timeline is the manifests' timed changes still to come, in order
	// (timeline.go); llmaz: an OpenModel is among the manifests, timed
	// or not, so its CRD counts as installed.
	timeline []manifests.TimedObject
	llmaz    bool
	// created numbers pods in creation order, as the scheduler's queue
	// takes them; order lists them so, deleted ones included until
	// compacted away, so reading every pod in order needs no sort.
	seq     int
	created map[*corev1.Pod]int
	order   []*corev1.Pod
	// onNode and nodeByProviderID index bound pods and Nodes, so a
	// node's pods and a NodeClaim's Node are found without a scan of the
	// cluster: a run of thousands of nodes would otherwise be quadratic.
	onNode map[string][]*corev1.Pod
	// podEvents are the nodes a pod bound to or left since the NodeClaims'
	// lastPodEventTime was last stamped (stampPodEvents).
	podEvents map[string]bool
	// podsChanged are the nodes whose bound pods changed since binding
	// last read them (binder.go).
	podsChanged      map[string]bool
	nodeByProviderID map[string]string
	// version counts changes to pods and nodes (not NodeClaims, which
	// binding ignores), so binding runs only when there may be something
	// new to bind.
	version int
	// pending counts the pods not bound to a node, kept as pods come,
	// bind and go: it is read at every wake.
	pending int
}

func (w *world) changed() { w.version++ }

// nodePool is the NodePool named name, nil when there is none.
func (w *world) nodePool(name string) *v1.NodePool {
	for i := range w.nodePools {
		if w.nodePools[i].Name == name {
			return &w.nodePools[i]
		}
	}
	return nil
}

func newWorld(set *manifests.Set) *world {
	w := &world{
		pods: map[string]*corev1.Pod{}, nodes: map[string]*corev1.Node{}, claims: map[string]*v1.NodeClaim{},
		nodeClasses: map[string]*simv1alpha1.SimNodeClass{}, models: map[string]*flavors.OpenModel{},
		namespaces: map[string]corev1.Namespace{}, created: map[*corev1.Pod]int{},
		onNode: map[string][]*corev1.Pod{}, nodeByProviderID: map[string]string{}, podEvents: map[string]bool{}, podsChanged: map[string]bool{},
		nodePools: slices.Clone(set.NodePools), overlays: slices.Clone(set.NodeOverlays), daemonSets: slices.Clone(set.DaemonSets),
		claimsPVC: slices.Clone(set.PersistentVolumeClaims), volumes: slices.Clone(set.PersistentVolumes),
		classes: slices.Clone(set.StorageClasses), pdbs: slices.Clone(set.PodDisruptionBudgets), podGroups: slices.Clone(set.PodGroups),
		timeline: slices.Clone(set.Timed), llmaz: len(set.OpenModels) > 0 || hasTimed[*flavors.OpenModel](set.Timed),
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

// openModels are the OpenModels pods serve, for flavor resolution;
// without any OpenModel in the manifests llmaz counts as not installed,
// as in a cluster without its CRD.
func (w *world) openModels(pods []*corev1.Pod) flavors.Models {
	if !w.llmaz {
		return flavors.Models{}
	}
	return flavors.GatherModels(pods, func(name string) (*flavors.OpenModel, error) {
		m, ok := w.models[name]
		if !ok {
			return nil, fmt.Errorf("openmodel %s is not in the manifests", name)
		}
		return m, nil
	})
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
	w.created[p] = w.seq
	w.order = append(w.order, p)
	w.pods[podKey(p)] = p
	if p.Spec.NodeName == "" {
		w.pending++
	} else {
		w.onNode[p.Spec.NodeName] = append(w.onNode[p.Spec.NodeName], p)
		w.podEvents[p.Spec.NodeName] = true
		w.podsChanged[p.Spec.NodeName] = true
	}
	w.changed()
	if _, ok := w.namespaces[p.Namespace]; !ok {
		ns := corev1.Namespace{}
		ns.Name = p.Namespace
		ns.Labels = map[string]string{corev1.LabelMetadataName: p.Namespace}
		w.namespaces[p.Namespace] = ns
	}
}

// bindPod binds a pending pod to a node.
func (w *world) bindPod(p *corev1.Pod, node string) {
	if p.Spec.NodeName == "" {
		w.pending--
	}
	p.Spec.NodeName = node
	w.onNode[node] = append(w.onNode[node], p)
	w.podEvents[node] = true
	w.podsChanged[node] = true
	w.changed()
}

func (w *world) deletePod(p *corev1.Pod) {
	if _, live := w.created[p]; live && p.Spec.NodeName == "" {
		w.pending--
	}
	delete(w.pods, podKey(p))
	delete(w.created, p)
	if on := slices.DeleteFunc(w.onNode[p.Spec.NodeName], func(q *corev1.Pod) bool { return q == p }); len(on) > 0 {
		w.onNode[p.Spec.NodeName] = on
	} else {
		delete(w.onNode, p.Spec.NodeName)
	}
	if p.Spec.NodeName != "" {
		w.podEvents[p.Spec.NodeName] = true
		w.podsChanged[p.Spec.NodeName] = true
	}
	w.changed()
}

// sortedPods are the pods in creation order.
func (w *world) sortedPods() []*corev1.Pod {
	// Compact once deleted pods are most of order, so reads stay
	// linear in the pods there are.
	if len(w.order) > 2*len(w.created) {
		w.order = slices.DeleteFunc(w.order, func(p *corev1.Pod) bool { _, ok := w.created[p]; return !ok })
	}
	out := make([]*corev1.Pod, 0, len(w.created))
	for _, p := range w.order {
		if _, ok := w.created[p]; ok {
			out = append(out, p)
		}
	}
	return out
}

// inCreationOrder sorts pods of the world by when they were created.
func (w *world) inCreationOrder(pods []*corev1.Pod) []*corev1.Pod {
	slices.SortFunc(pods, func(a, b *corev1.Pod) int { return cmp.Compare(w.created[a], w.created[b]) })
	return pods
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

// podsOn are the pods bound to a node, in creation order.
func (w *world) podsOn(node string) []*corev1.Pod {
	return w.inCreationOrder(slices.Clone(w.onNode[node]))
}

// setNode creates or updates a Node.
func (w *world) setNode(n *corev1.Node) {
	w.nodes[n.Name] = n
	w.nodeByProviderID[n.Spec.ProviderID] = n.Name
}

func (w *world) deleteNode(n *corev1.Node) {
	delete(w.nodes, n.Name)
	delete(w.nodeByProviderID, n.Spec.ProviderID)
}

// nodeOf finds the Node of a NodeClaim by provider id.
func (w *world) nodeOf(nc *v1.NodeClaim) *corev1.Node {
	if nc.Status.ProviderID == "" {
		return nil
	}
	return w.nodes[w.nodeByProviderID[nc.Status.ProviderID]]
}

// objects is the world as the provisioner lists it from the API server.
func (w *world) objects() state.Objects {
	objs := state.Objects{
		NodePools: w.nodePools, NodeOverlays: w.overlays, DaemonSets: w.daemonSets,
		Claims: w.claimsPVC, Volumes: w.volumes, StorageClasses: w.classes, PodGroups: w.podGroups,
	}
	// Sized up front: the pods are copied by value, and growing a slice
	// of them over and over is most of a large run's copying.
	objs.Pods = make([]corev1.Pod, 0, len(w.pods))
	for _, p := range w.sortedPods() {
		objs.Pods = append(objs.Pods, *p)
	}
	objs.Nodes = make([]corev1.Node, 0, len(w.nodes))
	for _, n := range w.sortedNodes() {
		objs.Nodes = append(objs.Nodes, *n)
	}
	objs.NodeClaims = make([]v1.NodeClaim, 0, len(w.claims))
	for _, nc := range w.sortedClaims() {
		objs.NodeClaims = append(objs.NodeClaims, *nc)
	}
	for _, name := range slices.Sorted(maps.Keys(w.namespaces)) {
		objs.Namespaces = append(objs.Namespaces, w.namespaces[name])
	}
	objs.PDBs = w.pdbsWithStatus()
	return objs
}
