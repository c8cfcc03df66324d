package state

import (
	"maps"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/api/v1alpha1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/gang"
	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/scheduling"
)

// Objects are the API objects a snapshot is built from.
type Objects struct {
	Pods           []corev1.Pod
	Nodes          []corev1.Node
	NodeClaims     []v1.NodeClaim
	NodePools      []v1.NodePool
	DaemonSets     []appsv1.DaemonSet
	Namespaces     []corev1.Namespace
	Claims         []corev1.PersistentVolumeClaim
	Volumes        []corev1.PersistentVolume
	StorageClasses []storagev1.StorageClass
	// PDBs are the PodDisruptionBudgets voluntary disruption must respect.
	PDBs []policyv1.PodDisruptionBudget
	// NodeOverlays adjust the instance types the shell gathers
	// (overlay.InstanceTypes); the snapshot reads only their result.
	NodeOverlays []v1alpha1.NodeOverlay
	// VirtualPods hold capacity without existing (IsVirtual): a
	// CapacityBuffer's replicas, a ProvisioningRequest's pod sets. The
	// shell sizes them with each kind's pure step (clusterstate.List);
	// they are solved like pending pods, never bound.
	VirtualPods []corev1.Pod
	// PodGroups are the group objects gangs' min counts are read from
	// (gang.Declare): the Workload API's PodGroups where the API server
	// serves them, scheduler-plugins' where its CRD is installed.
	PodGroups []unstructured.Unstructured
}

// Snapshot is the provisioner's view of the cluster at one moment.
type Snapshot struct {
	Input provisioning.Input
	// NodePools by name, for building NodeClaims from the result.
	NodePools map[string]*v1.NodePool
	// PodGroupErrors are the group objects whose min count could not be
	// read (their members count all of them); the shell reports them.
	PodGroupErrors []error
}

// Build turns objects into a solver input: the pending pods Capstan serves,
// existing nodes (with their NodeClaims' expected taints until they are
// initialized, so the unregistered and startup taints don't send pods
// elsewhere) and in-flight NodeClaims with the capacity they were sized
// for. Virtual pods go to the solver's Holding or Yielding (Yields). It
// is pure.
func Build(objs Objects, instanceTypes map[string][]*cloudprovider.InstanceType, schedulerNames []string) Snapshot {
	s := Snapshot{NodePools: map[string]*v1.NodePool{}}
	in := &s.Input
	in.InstanceTypes = withBookedSlots(instanceTypes, objs.NodeClaims)
	in.AtomicGroups, s.PodGroupErrors = gang.Declare(objs.PodGroups)
	for i := range objs.NodePools {
		np := &objs.NodePools[i]
		if np.DeletionTimestamp != nil {
			continue
		}
		s.NodePools[np.Name] = np
		in.NodePools = append(in.NodePools, np)
	}
	podsByNode := map[string][]*corev1.Pod{}
	for i := range objs.Pods {
		p := &objs.Pods[i]
		switch {
		case p.Spec.NodeName != "" && !IsTerminal(p):
			podsByNode[p.Spec.NodeName] = append(podsByNode[p.Spec.NodeName], p)
		case IsProvisionable(p, schedulerNames):
			in.Pods = append(in.Pods, p)
		}
	}
	in.Holding, in.Yielding = splitVirtual(objs.VirtualPods)
	claimsByProviderID := map[string]*v1.NodeClaim{}
	for i := range objs.NodeClaims {
		nc := &objs.NodeClaims[i]
		if nc.Status.ProviderID != "" {
			claimsByProviderID[nc.Status.ProviderID] = nc
		}
	}
	registered := map[string]bool{}
	shapes := provisioning.NewPodShapes()
	for i := range objs.Nodes {
		n := &objs.Nodes[i]
		nc := claimsByProviderID[n.Spec.ProviderID]
		if nc != nil {
			registered[nc.Name] = true
		}
		pods := podsByNode[n.Name]
		node := ExistingNode(n, nc, pods, UsageOf(pods))
		node.Groups = shapes.Group(node.Pods)
		in.Nodes = append(in.Nodes, node)
		if node.Deleting {
			in.Pods = append(in.Pods, reschedulable(node.Pods)...)
		}
	}
	claims := make([]*v1.NodeClaim, len(objs.NodeClaims))
	for i := range objs.NodeClaims {
		claims[i] = &objs.NodeClaims[i]
	}
	// A gang's launch that failed is about to be released: its NodeClaims
	// take no pods meanwhile, as if deleting (docs/batch.md, "Gangs").
	failed := gang.FailedLaunches(claims)
	for _, nc := range claims {
		if !registered[nc.Name] {
			node := InFlightNode(nc)
			node.Deleting = node.Deleting || failed[nc.Annotations[gang.AtomicGroupLaunchAnnotationKey]]
			in.Nodes = append(in.Nodes, node)
		}
	}
	for i := range objs.DaemonSets {
		ds := &objs.DaemonSets[i]
		in.DaemonSetPods = append(in.DaemonSetPods, &corev1.Pod{ObjectMeta: ds.Spec.Template.ObjectMeta, Spec: ds.Spec.Template.Spec})
	}
	in.Namespaces = map[string]map[string]string{}
	for _, ns := range objs.Namespaces {
		in.Namespaces[ns.Name] = ns.Labels
	}
	in.Volumes = provisioning.Volumes{Claims: map[string]*corev1.PersistentVolumeClaim{}, PersistentVolumes: map[string]*corev1.PersistentVolume{}, StorageClasses: map[string]*storagev1.StorageClass{}}
	for i := range objs.Claims {
		in.Volumes.Claims[objs.Claims[i].Namespace+"/"+objs.Claims[i].Name] = &objs.Claims[i]
	}
	for i := range objs.Volumes {
		in.Volumes.PersistentVolumes[objs.Volumes[i].Name] = &objs.Volumes[i]
	}
	for i := range objs.StorageClasses {
		in.Volumes.StorageClasses[objs.StorageClasses[i].Name] = &objs.StorageClasses[i]
	}
	return s
}

// withBookedSlots nets out of each reservation's advertised free slots
// the NodeClaims booked into it that have not launched yet: the cloud
// counts an instance only once it runs, and a solve in between must not
// book the same slots again. The instance types are copied where changed;
// the caller's are not modified.
func withBookedSlots(instanceTypes map[string][]*cloudprovider.InstanceType, claims []v1.NodeClaim) map[string][]*cloudprovider.InstanceType {
	booked := map[string]int{}
	for _, nc := range claims {
		if nc.Status.ProviderID != "" || nc.DeletionTimestamp != nil {
			continue
		}
		r := scheduling.NewNodeSelectorRequirementsWithMinValues(nc.Spec.Requirements...).Get(v1.LabelCapacityReservationID)
		if r.Len() == 1 {
			booked[r.Any()]++
		}
	}
	if len(booked) == 0 {
		return instanceTypes
	}
	out := make(map[string][]*cloudprovider.InstanceType, len(instanceTypes))
	for pool, its := range instanceTypes {
		out[pool] = make([]*cloudprovider.InstanceType, len(its))
		for i, it := range its {
			out[pool][i] = it
			if !slices.ContainsFunc(it.Offerings, func(o *cloudprovider.Offering) bool { return booked[o.ReservationID] > 0 }) {
				continue
			}
			cp := *it
			cp.Offerings = make(cloudprovider.Offerings, len(it.Offerings))
			for j, o := range it.Offerings {
				cp.Offerings[j] = o
				if n := booked[o.ReservationID]; n > 0 {
					oc := *o
					oc.Available = max(0, o.Available-n)
					cp.Offerings[j] = &oc
				}
			}
			out[pool][i] = &cp
		}
	}
	return out
}

// reschedulable are the pods of a deleting node that will need a place
// once it drains, as pending copies: provisioning for them before they are
// evicted means replacement capacity is up when they need it. Daemonset
// and finished pods stay behind.
func reschedulable(pods []*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pods {
		if IsDaemonSetPod(p) || IsTerminal(p) || p.DeletionTimestamp != nil {
			continue
		}
		cp := p.DeepCopy()
		cp.Spec.NodeName = ""
		out = append(out, cp)
	}
	return out
}

// UsageOf is what the pods take of their node.
func UsageOf(pods []*corev1.Pod) Usage {
	var u Usage
	for _, p := range pods {
		u.Requested = u.Requested.Add(scheduling.PodRequests(p))
		u.HostPorts = append(u.HostPorts, scheduling.PodHostPorts(p)...)
	}
	return u
}

// Usage is what pods bound to a node take of it: their requests summed
// and their host ports.
type Usage struct {
	Requested scheduling.Resources
	HostPorts []scheduling.HostPort
}

// ExistingNode is a registered node as the solver sees it, with the pods
// bound to it, what they take of it (UsageOf) and its NodeClaim if any.
// Build calls it for every node; a caller that keeps requested per node
// across snapshots calls it for one.
func ExistingNode(n *corev1.Node, nc *v1.NodeClaim, pods []*corev1.Pod, used Usage) *provisioning.Node {
	out := &provisioning.Node{
		Name: n.Name, NodePool: n.Labels[v1.NodePoolLabelKey], Labels: n.Labels, Taints: n.Spec.Taints,
		Allocatable: n.Status.Allocatable, Capacity: n.Status.Capacity, Pods: pods, Requested: &used.Requested, HostPorts: used.HostPorts,
		Deleting: n.DeletionTimestamp != nil,
	}
	if nc != nil {
		out.NodeClaim = nc.Name
		out.Deleting = out.Deleting || nc.DeletionTimestamp != nil
		if !meta.IsStatusConditionTrue(nc.Status.Conditions, v1.ConditionTypeInitialized) {
			out.Taints = expectedTaints(n.Spec.Taints, nc)
		}
	}
	return out
}

// expectedTaints are the taints a node will keep once Capstan has
// initialized it: its NodeClaim's taints plus any taint someone else put
// on the node that is not transient (unregistered, startup, not-ready).
func expectedTaints(current []corev1.Taint, nc *v1.NodeClaim) []corev1.Taint {
	out := append([]corev1.Taint{}, nc.Spec.Taints...)
	for _, t := range current {
		if transient(t, nc) {
			continue
		}
		known := false
		for _, e := range out {
			known = known || e.MatchTaint(&t)
		}
		if !known {
			out = append(out, t)
		}
	}
	return out
}

func transient(t corev1.Taint, nc *v1.NodeClaim) bool {
	switch t.Key {
	case v1.UnregisteredTaintKey, corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable:
		return true
	}
	for _, s := range nc.Spec.StartupTaints {
		if s.MatchTaint(&t) {
			return true
		}
	}
	return false
}

// InFlightNode is a NodeClaim without a node yet: its labels and those its
// requirements fix, its taints, and once launched the instance's capacity;
// before that, what it was sized for.
func InFlightNode(nc *v1.NodeClaim) *provisioning.Node {
	labels := scheduling.NewNodeSelectorRequirementsWithMinValues(nc.Spec.Requirements...).Labels()
	maps.Copy(labels, nc.Labels)
	allocatable, capacity := nc.Status.Allocatable, nc.Status.Capacity
	if len(allocatable) == 0 {
		allocatable, capacity = nc.Spec.Resources.Requests, nc.Spec.Resources.Requests
	}
	return &provisioning.Node{
		Name: nc.Name, NodePool: nc.Labels[v1.NodePoolLabelKey], Labels: labels, Taints: nc.Spec.Taints,
		Allocatable: allocatable, Capacity: capacity, InFlight: true, Deleting: nc.DeletionTimestamp != nil,
		AtomicGroup: nc.Annotations[gang.AtomicGroupAnnotationKey],
	}
}

// BuildWith builds the snapshot of the NodePools that have instance
// types, recording the unusable ones: both as the shell gathered them
// from the cloud (cloudprovider.InstanceTypesByNodePool), so building
// stays pure.
func BuildWith(objs Objects, its map[string][]*cloudprovider.InstanceType, unusable map[string]string, schedulerNames []string) Snapshot {
	usable := make([]v1.NodePool, 0, len(objs.NodePools))
	for _, np := range objs.NodePools {
		if _, ok := its[np.Name]; ok {
			usable = append(usable, np)
		}
	}
	objs.NodePools = usable
	s := Build(objs, its, schedulerNames)
	if len(unusable) > 0 {
		s.Input.UnusableNodePools = unusable
	}
	return s
}
