package disruption

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/state"
)

// Input is the cluster as disruption sees it.
type Input struct {
	NodePools  []*v1.NodePool
	NodeClaims []*v1.NodeClaim
	Nodes      []*corev1.Node
	// Pods are the pods bound to nodes.
	Pods []*corev1.Pod
	PDBs []*policyv1.PodDisruptionBudget
	// Virtual are the virtual pods that fit existing or in-flight
	// capacity now, each with Spec.NodeName the node it fits (NewInput,
	// placeVirtual); they move with their node as its pods do.
	Virtual []*corev1.Pod
	// Snapshot is the scheduling view of the same objects (instance types
	// included): where pods could go without a candidate, and where the
	// pending ones are headed.
	Snapshot state.Snapshot
	// Unavailable is until when offerings were last marked unavailable
	// (the provisioner's cache), for returning to preferred capacity.
	Unavailable cloudprovider.UnavailableHistory
}

// Policies are the solver's relaxation policies; the zero value is
// Strict and Respect.
type Policies struct {
	MinValues  provisioning.MinValuesPolicy
	Preference provisioning.PreferencePolicy
}

// NewInput is the disruption view of a snapshot's objects. Disruption
// solves the snapshot once per candidate: unless the caller prepared it,
// the input gets its own read-only provisioning.Prepared for those
// solves to share.
//
// Every simulation over the input solves with p, the controller's
// --min-values-policy and --preference-policy, as scale-up does: a
// replacement is found under the rules a new node would be launched by
// (docs/controller.md).
func NewInput(objs state.Objects, snapshot state.Snapshot, p Policies) Input {
	snapshot.Input.Options.MinValuesPolicy, snapshot.Input.Options.PreferencePolicy = p.MinValues, p.Preference
	var virtual []*corev1.Pod
	snapshot.Input.Nodes, virtual = placeVirtual(snapshot.Input)
	snapshot.Input.Holding, snapshot.Input.Yielding = nil, nil
	if snapshot.Input.Prepared == nil {
		snapshot.Input.Prepared = provisioning.Prepare(snapshot.Input)
	}
	in := Input{Snapshot: snapshot, Virtual: virtual}
	for i := range objs.NodePools {
		if objs.NodePools[i].DeletionTimestamp == nil {
			in.NodePools = append(in.NodePools, &objs.NodePools[i])
		}
	}
	for i := range objs.NodeClaims {
		in.NodeClaims = append(in.NodeClaims, &objs.NodeClaims[i])
	}
	for i := range objs.Nodes {
		in.Nodes = append(in.Nodes, &objs.Nodes[i])
	}
	for i := range objs.Pods {
		if objs.Pods[i].Spec.NodeName != "" {
			in.Pods = append(in.Pods, &objs.Pods[i])
		}
	}
	for i := range objs.PDBs {
		in.PDBs = append(in.PDBs, &objs.PDBs[i])
	}
	return in
}

// Candidate is a node a method may disrupt, with its pods and what, if
// anything, blocks voluntary disruption of it.
type Candidate struct {
	NodeClaim *v1.NodeClaim
	Node      *corev1.Node
	NodePool  *v1.NodePool
	// Pods must move elsewhere if the node goes (mustMove).
	Pods []*corev1.Pod
	// Blocked says why voluntary methods must leave the node alone, in
	// the reference's words; empty when nothing does.
	Blocked string
	// Hold is the pod Blocked names, when a pod blocks and nothing about
	// the node itself does.
	Hold *Hold
	// GangHeld: Blocked is gangHold's, a gang that runs on other nodes
	// too.
	GangHeld bool
	// Price is what the node costs an hour (its offering's price), when
	// Priced: the snapshot knows its offering.
	Price  float64
	Priced bool
}

// Hold is a pod that blocks voluntary disruption of its node: its
// karpenter.sh/do-not-disrupt, or a PodDisruptionBudget refusing its
// eviction.
type Hold struct {
	Pod *corev1.Pod
	// Until is when the pod's do-not-disrupt duration ends, and with it
	// the hold unless another pod holds the node; zero when only a change
	// in the cluster ends it.
	Until time.Time
	// Invalid says why the pod's do-not-disrupt value is invalid (it
	// holds as "true" does; state.DoNotDisruptOf).
	Invalid string
}

// Candidates are the NodeClaims a NodePool owns with a registered Node,
// by NodeClaim name, as they stand at now. Forceful methods (expiration,
// interruption) may act on blocked ones; voluntary methods never do, but
// for Eventual ones on a NodeClaim with a terminationGracePeriod, which
// a pod's hold does not stop (Candidate.held).
func Candidates(in Input, now time.Time) []Candidate {
	pools := map[string]*v1.NodePool{}
	for _, np := range in.NodePools {
		pools[np.Name] = np
	}
	nodes := map[string]*corev1.Node{}
	for _, n := range in.Nodes {
		nodes[n.Name] = n
	}
	pods := map[string][]*corev1.Pod{}
	for _, p := range slices.Concat(in.Pods, in.Virtual) {
		pods[p.Spec.NodeName] = append(pods[p.Spec.NodeName], p)
	}
	nominated := nominatedNodes(in.Snapshot)
	gangs := gangNodes(in.Pods, in.Snapshot.Input.AtomicGroups)
	var out []Candidate
	for _, nc := range in.NodeClaims {
		np, node := pools[nc.Labels[v1.NodePoolLabelKey]], nodes[nc.Status.NodeName]
		if np == nil || node == nil {
			continue
		}
		c := Candidate{NodeClaim: nc, Node: node, NodePool: np}
		c.Price, c.Priced = cloudprovider.LaunchedPrice(nc, in.Snapshot.Input.InstanceTypes[np.Name])
		for _, p := range pods[node.Name] {
			if mustMove(p) {
				c.Pods = append(c.Pods, p)
			}
		}
		c.Blocked = blocked(c)
		if c.Blocked == "" && nominated[node.Name] {
			c.Blocked = "node is nominated for a pending pod"
		}
		if c.Blocked == "" {
			c.Hold, c.Blocked = hold(c, pods[node.Name], in.PDBs, now)
		}
		if c.Blocked == "" {
			c.Blocked = gangHold(c, gangs)
			c.GangHeld = c.Blocked != ""
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Candidate) int { return strings.Compare(a.NodeClaim.Name, b.NodeClaim.Name) })
	return out
}

// BlockedFor is what keeps method m off c: Blocked, but for Repair only
// the node's deletion or initialization, and nothing when
// only a pod holds c, m is Eventual and c's NodeClaim has a
// terminationGracePeriod. The drain then honours the pod until the grace
// period ends, as in the reference (its "eventual" disruption class,
// pkg/controllers/disruption/types.go; docs/disruption.md).
func (c Candidate) BlockedFor(m Method) string {
	if _, ok := m.(Repair); ok {
		// A broken node goes whatever holds it but its own coming or
		// going (docs/disruption.md, "Node repair").
		if c.Blocked == blockedDeleting || c.Blocked == blockedUninitialized {
			return c.Blocked
		}
		return ""
	}
	if _, ok := m.(Eventual); ok && c.Hold != nil && c.NodeClaim.Spec.TerminationGracePeriod != nil {
		return ""
	}
	return c.Blocked
}

// mustMove: the pod needs a place elsewhere if its node goes. DaemonSet
// pods, finished and terminating pods, and static pods (their mirrors)
// do not, as in the reference.
func mustMove(p *corev1.Pod) bool {
	_, mirror := p.Annotations[corev1.MirrorPodAnnotationKey]
	return !state.IsDaemonSetPod(p) && !state.IsTerminal(p) && p.DeletionTimestamp == nil && !mirror
}

// Blockers of nodes on their way in or out: no event is worth sending.
const (
	blockedDeleting      = "node is being deleted"
	blockedUninitialized = "node is not initialized"
)

// blocked is the first reason about the node itself that voluntary
// disruption must not touch c. The NodePool's template carries its
// annotations to the NodeClaim only, so do-not-disrupt is read on both
// (the reference syncs them to the Node and reads it,
// pkg/controllers/state/statenode.go), and on the template itself, so
// adding it to a live pool protects its nodes at once: the template
// change drifts them, and this holds that drift too
// (docs/disruption.md, "do-not-disrupt on nodes").
func blocked(c Candidate) string {
	switch {
	case c.NodeClaim.DeletionTimestamp != nil || c.Node.DeletionTimestamp != nil:
		return blockedDeleting
	case !meta.IsStatusConditionTrue(c.NodeClaim.Status.Conditions, v1.ConditionTypeInitialized):
		return blockedUninitialized
	}
	for _, o := range []struct {
		kind, name  string
		annotations map[string]string
	}{
		{"node", c.Node.Name, c.Node.Annotations},
		{"nodeclaim", c.NodeClaim.Name, c.NodeClaim.Annotations},
		{"nodepool template of", c.NodePool.Name, c.NodePool.Spec.Template.ObjectMeta.Annotations},
	} {
		if dnd := state.NodeDoNotDisruptOf(o.annotations); dnd.Invalid != "" {
			return fmt.Sprintf("%s %s has do-not-disrupt with an invalid value (%s), held as \"true\"", o.kind, o.name, dnd.Invalid)
		} else if dnd.Active {
			return fmt.Sprintf("%s %s has do-not-disrupt", o.kind, o.name)
		}
	}
	return ""
}

// hold is the first pod on c's node that blocks its voluntary
// disruption at now, and the verdict's words; nil when none does. Of the
// pods whose do-not-disrupt holds, the one held longest names the hold,
// so the verdict says when the node is free.
func hold(c Candidate, all []*corev1.Pod, pdbs []*policyv1.PodDisruptionBudget, now time.Time) (*Hold, string) {
	var h *Hold
	for _, p := range all {
		// A virtual pod is never evicted: nothing of it can hold a node.
		if state.IsTerminal(p) || state.IsVirtual(p) {
			continue
		}
		d := state.DoNotDisruptOf(p, now)
		if !d.Active {
			continue
		}
		if h == nil || (!h.Until.IsZero() && (d.Until.IsZero() || d.Until.After(h.Until))) {
			h = &Hold{Pod: p, Until: d.Until, Invalid: d.Invalid}
		}
	}
	if h != nil {
		msg := fmt.Sprintf("pod %s/%s has do-not-disrupt", h.Pod.Namespace, h.Pod.Name)
		switch {
		case h.Invalid != "":
			msg += fmt.Sprintf(" with an invalid value (%s), held as \"true\"", h.Invalid)
		case !h.Until.IsZero():
			msg += " until " + h.Until.UTC().Format(time.RFC3339)
		}
		return h, msg
	}
	for _, p := range c.Pods {
		if state.IsVirtual(p) {
			continue
		}
		if pdb := refusing(p, pdbs); pdb != nil {
			return &Hold{Pod: p}, fmt.Sprintf("pdb %s/%s prevents pod evictions", pdb.Namespace, pdb.Name)
		}
	}
	return nil, ""
}

// refusing is a PDB that would refuse evicting p now: it selects p and
// allows no disruption.
func refusing(p *corev1.Pod, pdbs []*policyv1.PodDisruptionBudget) *policyv1.PodDisruptionBudget {
	for _, pdb := range pdbs {
		if pdb.Namespace != p.Namespace || pdb.Status.DisruptionsAllowed > 0 || pdb.Spec.Selector == nil {
			continue
		}
		selector, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		// In policy/v1 an empty selector selects every pod of the namespace.
		if err != nil {
			continue
		}
		if selector.Matches(labels.Set(p.Labels)) {
			return pdb
		}
	}
	return nil
}
