package checker

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/provisioning"
)

// launchNode is one concrete node a NodeClaim could become.
type launchNode struct {
	instanceType *cloudprovider.InstanceType
	offering     *cloudprovider.Offering
	node         *corev1.Node
}

// cloudKeys are the labels the cloud sets from the instance it launches,
// stated here rather than taken from the solver: their requirements choose
// which instance types and offerings a claim may launch as, while every
// other label reaches the node only through NodeClaim.Labels.
var cloudKeys = sets.New(
	v1.LabelInstanceType, v1.LabelZone, v1.LabelZoneID, v1.LabelRegion, v1.LabelArch, v1.LabelOS,
	v1.CapacityTypeLabelKey, v1.LabelCapacityReservationID, v1.LabelCapacityReservationType, v1.LabelCapacityReservationInterruptible,
	v1.LabelInstanceCategory, v1.LabelInstanceFamily, v1.LabelInstanceGeneration,
	v1.LabelInstanceSize, v1.LabelInstanceCPU, v1.LabelInstanceMemory,
	v1.LabelInstanceGPUName, v1.LabelInstanceGPUCount, v1.LabelInstanceGPUManufacturer, v1.LabelInstanceGPUMemory,
)

// launchable lists every (instance type, offering) the cloud could pick for
// the claim: an available offering whose labels satisfy the claim's
// requirements on the keys the cloud decides (and the instance type's own
// keys), checked with kube-scheduler's matcher on a concrete node.
func launchable(c *provisioning.NodeClaim) ([]launchNode, error) {
	var out []launchNode
	core := toCore(c)
	// The selector depends only on which of the claim's keys the type has:
	// most types have the same ones, and building a selector validates
	// every value (dozens of instance-type names) again.
	selectors := map[string]*nodeaffinity.NodeSelector{}
	for _, it := range c.InstanceTypes {
		var exprs []corev1.NodeSelectorRequirement
		var keys strings.Builder
		for _, r := range core {
			if cloudKeys.Has(r.Key) || it.Requirements.Has(r.Key) {
				exprs = append(exprs, r)
				keys.WriteString(r.Key)
				keys.WriteByte(0)
			}
		}
		selector, ok := selectors[keys.String()]
		if !ok {
			var err error
			selector, err = nodeaffinity.NewNodeSelector(&corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: exprs}}})
			if err != nil {
				return nil, fmt.Errorf("invalid requirements: %w", err)
			}
			selectors[keys.String()] = selector
		}
		for _, o := range it.Offerings {
			if !o.IsAvailable() && o.ReservationID == "" {
				continue
			}
			cloud := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: cloudLabels(it, o)}}
			if selector.Match(cloud) {
				out = append(out, launchNode{instanceType: it, offering: o, node: concreteNode(c, cloud.Labels)})
			}
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no instance type and offering can satisfy its requirements")
	}
	return out, nil
}

func toCore(c *provisioning.NodeClaim) []corev1.NodeSelectorRequirement {
	var out []corev1.NodeSelectorRequirement
	for _, r := range c.Requirements.NodeSelectorRequirements() {
		out = append(out, corev1.NodeSelectorRequirement{Key: r.Key, Operator: r.Operator, Values: r.Values})
	}
	return out
}

// cloudLabels are what the cloud labels an instance with: the instance
// type's single-valued labels and the offering's zone, zone ID, capacity
// type and reservation.
func cloudLabels(it *cloudprovider.InstanceType, o *cloudprovider.Offering) map[string]string {
	labels := map[string]string{}
	for key, r := range it.Requirements {
		if vals := r.Values(); len(vals) == 1 && r.Operator() == corev1.NodeSelectorOpIn {
			labels[key] = vals[0]
		}
	}
	labels[v1.LabelZone] = o.Zone
	if o.ZoneID != "" {
		labels[v1.LabelZoneID] = o.ZoneID
	} else {
		delete(labels, v1.LabelZoneID)
	}
	labels[v1.CapacityTypeLabelKey] = o.CapacityType
	maps.Copy(labels, o.ReservationLabels())
	return labels
}

// concreteNode is the node the claim registers as: the NodeClaim's labels
// (never its requirements: a label the solver assumed but did not put
// there is missing on the real node), its NodePool's, and the cloud's.
func concreteNode(c *provisioning.NodeClaim, cloud map[string]string) *corev1.Node {
	labels := map[string]string{v1.NodePoolLabelKey: c.NodePool}
	for k, v := range c.Labels {
		labels[k] = v
	}
	for k, v := range cloud {
		labels[k] = v
	}
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "planned", Labels: labels}, Spec: corev1.NodeSpec{Taints: c.Taints}}
}

// checkNode verifies one concrete node a claim could become: it carries
// what its NodePool and the claim's requirements promise, its pods'
// selectors match it and they tolerate its taints, and the pods with the
// daemonsets that would run there fit its allocatable and host ports.
func checkNode(in provisioning.Input, c *provisioning.NodeClaim, reqs []requirement, n launchNode, where string) []error {
	errs := checkRequirements(reqs, n.node, where)
	for _, p := range c.Pods {
		errs = append(errs, fits(p, n.node, where)...)
	}
	daemons := daemonsOn(in, n.node, c.StartupTaints)
	errs = append(errs, checkResources(c.Pods, daemons, allocatable(n.instanceType), where)...)
	errs = append(errs, checkPorts(daemons, c.Pods, where)...)
	return errs
}

// requirement is one NodePool or NodeClaim requirement with its selector
// (or why it has none), built once per claim for all its concrete nodes.
type requirement struct {
	owner    string
	r        corev1.NodeSelectorRequirement
	selector *nodeaffinity.NodeSelector
	err      error
}

// requirements are what every node the claim becomes must satisfy: its
// NodePool's template requirements (read from the input, not the claim)
// and every requirement of the claim, each of which the solver assumed
// when placing pods.
func requirements(in provisioning.Input, c *provisioning.NodeClaim) []requirement {
	var out []requirement
	add := func(owner string, r corev1.NodeSelectorRequirement) {
		s, err := nodeaffinity.NewNodeSelector(&corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{r}}}})
		out = append(out, requirement{owner, r, s, err})
	}
	for _, np := range in.NodePools {
		if np.Name != c.NodePool {
			continue
		}
		for _, r := range np.Spec.Template.Spec.Requirements {
			add("nodepool "+np.Name, poolRequirement(r))
		}
	}
	for _, r := range toCore(c) {
		add("nodeclaim", r)
	}
	return out
}

// checkRequirements: the node satisfies every requirement.
func checkRequirements(reqs []requirement, node *corev1.Node, where string) []error {
	var errs []error
	for _, r := range reqs {
		if r.err != nil {
			errs = append(errs, fmt.Errorf("%s: %s's requirement %v is invalid: %w", where, r.owner, r.r, r.err))
		} else if !r.selector.Match(node) {
			errs = append(errs, fmt.Errorf("%s: the node lacks what %s's requirement %s %s %v fixes (labels %v)", where, r.owner, r.r.Key, r.r.Operator, r.r.Values, node.Labels))
		}
	}
	return errs
}

// poolRequirement converts a NodePool requirement for kube-scheduler's
// matcher, which knows Gt and Lt but not the API's Gte and Lte.
func poolRequirement(r v1.NodeSelectorRequirementWithMinValues) corev1.NodeSelectorRequirement {
	out := corev1.NodeSelectorRequirement{Key: r.Key, Operator: r.Operator, Values: r.Values}
	if r.Operator != "Gte" && r.Operator != "Lte" || len(r.Values) != 1 {
		return out
	}
	n, err := strconv.ParseInt(r.Values[0], 10, 64)
	if err != nil {
		return out
	}
	// Gte 0 and Lte max bound nothing a node's label can fail but absence.
	switch {
	case r.Operator == "Gte" && n == 0:
		out.Operator, out.Values = corev1.NodeSelectorOpExists, nil
	case r.Operator == "Gte":
		out.Operator, out.Values = corev1.NodeSelectorOpGt, []string{strconv.FormatInt(n-1, 10)}
	case n == math.MaxInt64:
		out.Operator, out.Values = corev1.NodeSelectorOpExists, nil
	default:
		out.Operator, out.Values = corev1.NodeSelectorOpLt, []string{strconv.FormatInt(n+1, 10)}
	}
	return out
}

// daemonsOn lists the daemonsets that would run on the node: their
// required node affinity matches its labels and they tolerate its taints
// and the startup taints given.
func daemonsOn(in provisioning.Input, node *corev1.Node, startupTaints []corev1.Taint) []*corev1.Pod {
	var out []*corev1.Pod
	for _, d := range in.DaemonSetPods {
		if len(fits(d, node, "")) == 0 && tolerates(d, startupTaints) {
			out = append(out, d)
		}
	}
	return out
}

func tolerates(p *corev1.Pod, taints []corev1.Taint) bool {
	_, untolerated := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), taints, p.Spec.Tolerations, func(t *corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
	}, true)
	return !untolerated
}

// allocatable is capacity less kube-reserved, system-reserved and the
// eviction threshold, in Quantity arithmetic.
func allocatable(it *cloudprovider.InstanceType) corev1.ResourceList {
	out := corev1.ResourceList{}
	for name, q := range it.Capacity {
		a := q.DeepCopy()
		for _, rl := range []corev1.ResourceList{it.Overhead.KubeReserved, it.Overhead.SystemReserved, it.Overhead.EvictionThreshold} {
			if o, ok := rl[name]; ok {
				a.Sub(o)
			}
		}
		out[name] = a
	}
	return out
}

// inFlightDaemons are the daemonsets that will run on an in-flight
// NodeClaim: they hold their host ports before any pod arrives.
func inFlightDaemons(in provisioning.Input, n *provisioning.Node) []*corev1.Pod {
	if !n.InFlight {
		return nil
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: n.Labels}, Spec: corev1.NodeSpec{Taints: n.Taints}}
	return daemonsOn(in, node, nil)
}

// daemonsFit reports whether a NodePool can launch the instance type in
// the offering at all: the daemonsets certain to run there (selecting
// labels the cloud and the NodePool's template fix) fit its allocatable.
// A type that cannot launch is no node kube-scheduler will ever see, so
// not a topology domain.
func daemonsFit(in provisioning.Input, np *v1.NodePool, it *cloudprovider.InstanceType, o *cloudprovider.Offering) bool {
	labels := map[string]string{v1.NodePoolLabelKey: np.Name}
	for _, r := range np.Spec.Template.Spec.Requirements {
		if r.Operator == corev1.NodeSelectorOpIn && len(r.Values) == 1 {
			labels[r.Key] = r.Values[0]
		}
	}
	for k, v := range np.Spec.Template.ObjectMeta.Labels {
		labels[k] = v
	}
	for k, v := range cloudLabels(it, o) {
		labels[k] = v
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "planned", Labels: labels}, Spec: corev1.NodeSpec{Taints: np.Spec.Template.Spec.Taints}}
	return len(checkResources(nil, daemonsOn(in, node, np.Spec.Template.Spec.StartupTaints), allocatable(it), "")) == 0
}
