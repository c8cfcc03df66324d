package clusterstate

import (
	"context"
	"fmt"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/api/v1alpha1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/overlay"
	"github.com/capstan-dev/capstan/pkg/state"
)

// List reads every object a snapshot is built from, and the virtual
// pods sized from them (VirtualPods).
func List(ctx context.Context, c client.Reader, src Sources) (state.Objects, error) {
	pods, nodes, ncs, nps := &corev1.PodList{}, &corev1.NodeList{}, &v1.NodeClaimList{}, &v1.NodePoolList{}
	dss, nss := &appsv1.DaemonSetList{}, &corev1.NamespaceList{}
	pvcs, pvs, scs := &corev1.PersistentVolumeClaimList{}, &corev1.PersistentVolumeList{}, &storagev1.StorageClassList{}
	pdbs, overlays := &policyv1.PodDisruptionBudgetList{}, &v1alpha1.NodeOverlayList{}
	for _, l := range []client.ObjectList{pods, nodes, ncs, nps, dss, nss, pvcs, pvs, scs, pdbs, overlays} {
		if err := c.List(ctx, l); err != nil {
			return state.Objects{}, fmt.Errorf("listing %T, %w", l, err)
		}
	}
	objs := state.Objects{
		Pods: pods.Items, Nodes: nodes.Items, NodeClaims: ncs.Items, NodePools: nps.Items, DaemonSets: dss.Items,
		Namespaces: nss.Items, Claims: pvcs.Items, Volumes: pvs.Items, StorageClasses: scs.Items, PDBs: pdbs.Items,
		NodeOverlays: overlays.Items,
	}
	virtual, err := VirtualPods(ctx, c, src, objs)
	if err != nil {
		return state.Objects{}, err
	}
	objs.VirtualPods = virtual
	return objs, nil
}

// Cluster builds snapshots from a (cache-backed) client and the cloud.
type Cluster struct {
	Client         client.Reader
	Cloud          cloudprovider.CloudProvider
	SchedulerNames []string
	// Sources are the virtual pods' kinds to gather (VirtualPods).
	Sources Sources
	// Mapper tells whether llmaz's OpenModel API (OpenModels) and the
	// PodGroup APIs (PodGroups) are served; nil: none is.
	Mapper meta.RESTMapper
	// LaunchPrices get the prices of every Snapshot's instance types, for
	// the cloud to launch by; nil: none are kept.
	LaunchPrices *cloudprovider.LaunchPrices

	mu sync.Mutex
	// known are the instance types (and why NodePools were unusable) the
	// last Snapshot got from the cloud, for ReadOnlySnapshot.
	known    map[string][]*cloudprovider.InstanceType
	unusable map[string]string
}

// Snapshot lists the objects, asks the cloud for each NodePool's instance
// types and builds the snapshot with them (state.BuildWith), remembering
// them for ReadOnlySnapshot.
func (c *Cluster) Snapshot(ctx context.Context) (state.Snapshot, error) {
	_, s, err := c.SnapshotWithObjects(ctx)
	return s, err
}

// SnapshotWithObjects is Snapshot and the objects it was built from, for
// readers (disruption) that need both views of one moment. The instance
// types are the cloud's with the NodeOverlays applied (overlay.InstanceTypes),
// so the provisioner, disruption and explain all see the same prices.
func (c *Cluster) SnapshotWithObjects(ctx context.Context) (state.Objects, state.Snapshot, error) {
	objs, err := c.list(ctx)
	if err != nil {
		return state.Objects{}, state.Snapshot{}, err
	}
	res, unusable, err := overlay.InstanceTypes(ctx, c.Cloud, objs.NodePools, objs.NodeOverlays)
	if err != nil {
		return state.Objects{}, state.Snapshot{}, err
	}
	its := res.InstanceTypes
	c.LaunchPrices.Set(its)
	c.mu.Lock()
	c.known, c.unusable = its, unusable
	c.mu.Unlock()
	return objs, state.BuildWith(objs, its, unusable, c.SchedulerNames), nil
}

// ReadOnlySnapshot is Snapshot without asking the cloud: the instance
// types are those the last Snapshot got (the provisioner's), so a reader
// such as explain never advances the cloud or writes anything. A NodePool
// the provisioner has not looked at yet is unusable, saying so.
func (c *Cluster) ReadOnlySnapshot(ctx context.Context) (state.Snapshot, error) {
	_, s, err := c.ReadOnlySnapshotWithObjects(ctx)
	return s, err
}

// ReadOnlySnapshotWithObjects is ReadOnlySnapshot and the objects it was
// built from (explain's disruption answers need both views of one
// moment); like it, it never asks the cloud.
func (c *Cluster) ReadOnlySnapshotWithObjects(ctx context.Context) (state.Objects, state.Snapshot, error) {
	objs, err := c.list(ctx)
	if err != nil {
		return state.Objects{}, state.Snapshot{}, err
	}
	c.mu.Lock()
	its, unusable := map[string][]*cloudprovider.InstanceType{}, map[string]string{}
	for _, np := range objs.NodePools {
		switch known, ok := c.known[np.Name]; {
		case ok:
			its[np.Name] = known
		case c.unusable[np.Name] != "":
			unusable[np.Name] = c.unusable[np.Name]
		default:
			unusable[np.Name] = "no instance types known yet: the provisioner has not solved since the NodePool appeared"
		}
	}
	c.mu.Unlock()
	return objs, state.BuildWith(objs, its, unusable, c.SchedulerNames), nil
}

// KnownInstanceTypes are the instance types the last Snapshot got for a
// NodePool, and whether it got any.
func (c *Cluster) KnownInstanceTypes(nodePool string) ([]*cloudprovider.InstanceType, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	its, ok := c.known[nodePool]
	return its, ok
}
