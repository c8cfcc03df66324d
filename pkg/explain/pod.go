package explain

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/scaleup"
	"github.com/capstan-dev/capstan/pkg/scheduling"
	"github.com/capstan-dev/capstan/pkg/state"
)

// PodInput is what explaining a pod reads.
type PodInput struct {
	Pod *corev1.Pod
	// Snapshot is the provisioner's view of the cluster. Offline (no
	// controller to ask) it has no instance types.
	Snapshot       state.Snapshot
	SchedulerNames []string
	// Plan are the provisioner's options, with the OpenModels the pod
	// serves (Plan.Models) gathered by the caller.
	Plan scaleup.Options
	// Offline: instance types, offerings and the unavailable-offerings
	// cache are not known; only what the API holds is.
	Offline bool
	// LastEvent is the latest reason Capstan recorded on the pod.
	LastEvent string
}

// maxCheapest is how many instance types a verdict lists.
const maxCheapest = 3

// maxMarks bounds the unavailable offerings a verdict lists.
const maxMarks = 10

// ForPod says whether Capstan considers the pod, what each NodePool
// would do for it and why, and what the next provisioning will do. The
// answers come from the provisioner's own decision (scaleup.Decide) run on
// the pod alone, once with every NodePool and once per NodePool, so they
// are what the controller would do, not a second opinion.
func ForPod(in PodInput) Pod {
	p := in.Pod
	out := Pod{Pod: p.Namespace + "/" + p.Name, Node: p.Spec.NodeName, LastEvent: in.LastEvent, NodePools: []PoolVerdict{}}
	out.Considered, out.Consideration = consideration(p, in.SchedulerNames)
	if in.Offline {
		out.Unknown = []string{
			"instance types, prices and capacity reservations: the cloud is asked by the controller (pass --controller-address)",
			"offerings marked unavailable after insufficient capacity: that cache lives only in the controller",
		}
	} else if p.Spec.NodeName == "" {
		out.Next = next(scaleup.Decide(withPod(in.Snapshot, p, nil), in.Plan, claimName))
		out.Flavors = flavorVerdicts(in)
	}
	for _, np := range in.Snapshot.Input.NodePools {
		out.NodePools = append(out.NodePools, verdict(in, np))
	}
	return out
}

func claimName(np string) string { return np + "-(new)" }

func consideration(p *corev1.Pod, schedulerNames []string) (bool, string) {
	scheduler := p.Spec.SchedulerName
	if scheduler == "" {
		scheduler = corev1.DefaultSchedulerName
	}
	switch {
	case p.Spec.NodeName != "":
		return false, "bound to node " + p.Spec.NodeName + "; nothing to provision"
	case p.DeletionTimestamp != nil:
		return false, "being deleted"
	case state.IsTerminal(p):
		return false, "finished (" + string(p.Status.Phase) + ")"
	case !slices.Contains(schedulerNames, scheduler):
		return false, state.SchedulerNotServed(scheduler, schedulerNames)
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return true, fmt.Sprintf("%s marked it Unschedulable at %s: %s", scheduler, c.LastTransitionTime.UTC().Format("15:04:05Z"), c.Message)
		}
	}
	return false, scheduler + " has not marked it Unschedulable yet: it may still fit an existing node"
}

// withPod is the snapshot with the pod as its only pending pod; with
// pools set, only those NodePools, and existing nodes kept for the
// limits they use but taking no pods, so the answer is the NodePool's.
func withPod(s state.Snapshot, p *corev1.Pod, pools []*v1.NodePool) state.Snapshot {
	pending := p.DeepCopy()
	pending.Spec.NodeName = ""
	s.Input.Pods = []*corev1.Pod{pending}
	if pools != nil {
		s.Input.NodePools = pools
		nodes := make([]*provisioning.Node, len(s.Input.Nodes))
		for i, n := range s.Input.Nodes {
			cp := *n
			cp.Deleting = true
			nodes[i] = &cp
		}
		s.Input.Nodes = nodes
	}
	return s
}

// next renders the decision for the pod with every NodePool.
func next(d scaleup.Decision) string {
	for _, f := range d.FlavorFailures {
		return fmt.Sprintf("nothing: %s: %v", f.Reason, f.Err)
	}
	for _, n := range d.Result.Nominations {
		return "wait for " + n.NodeName + ", which has room for it (running or launching)"
	}
	for _, c := range d.Result.NewNodeClaims {
		return fmt.Sprintf("launch a NodeClaim from NodePool %s: %s", c.NodePool, describeOptions(options(c)))
	}
	for _, u := range d.Result.Unplaced {
		return fmt.Sprintf("nothing until something changes: %s: %s", u.Reason, u.Message)
	}
	return "nothing"
}

func verdict(in PodInput, np *v1.NodePool) PoolVerdict {
	v := PoolVerdict{NodePool: np.Name, Limits: limits(np, in.Snapshot.Input.Nodes)}
	if in.Offline {
		if err := scheduling.Tolerates(in.Pod.Spec.Tolerations, np.Spec.Template.Spec.Taints); err != nil {
			v.Reason, v.Message = string(provisioning.ReasonTaintNotTolerated), err.Error()
		}
		return v
	}
	d := scaleup.Decide(withPod(in.Snapshot, in.Pod, []*v1.NodePool{np}), in.Plan, claimName)
	switch {
	case len(d.FlavorFailures) > 0:
		v.Reason, v.Message = d.FlavorFailures[0].Reason, d.FlavorFailures[0].Err.Error()
	case len(d.Result.Unplaced) > 0:
		v.Reason, v.Message = string(d.Result.Unplaced[0].Reason), d.Result.Unplaced[0].Message
	case len(d.Result.NewNodeClaims) > 0:
		v.Compatible = true
		v.Cheapest = options(d.Result.NewNodeClaims[0])
	}
	if in.Plan.Unavailable != nil {
		v.Unavailable = marksFor(in.Plan.Unavailable.Marks(), in.Snapshot.Input.InstanceTypes[np.Name])
	}
	return v
}

// options are a planned claim's cheapest instance types, each at the
// price of its cheapest offering of the capacity type the solver expects
// the claim to launch as (in the reservation it booked, if any).
func options(c *provisioning.NodeClaim) []Option {
	var out []Option
	for _, it := range c.InstanceTypes[:min(maxCheapest, len(c.InstanceTypes))] {
		best, found := 0.0, false
		for _, o := range it.Offerings {
			booked := c.ReservationID != "" && o.ReservationID == c.ReservationID
			usable := o.CapacityType == c.CapacityType && o.CompatibleWith(c.Requirements) && (booked || o.IsAvailable())
			if usable && (!found || o.Price < best) {
				best, found = o.Price, true
			}
		}
		if found {
			out = append(out, Option{InstanceType: it.Name, CapacityType: c.CapacityType, PricePerHour: best})
		}
	}
	return out
}

func describeOptions(opts []Option) string {
	parts := make([]string, len(opts))
	for i, o := range opts {
		parts[i] = fmt.Sprintf("%s (%s, %.4f/h)", o.InstanceType, o.CapacityType, o.PricePerHour)
	}
	return strings.Join(parts, " or ")
}

// marksFor keeps the marks on the NodePool's instance types and the
// capacity types marked account-wide.
func marksFor(marks []cloudprovider.Mark, its []*cloudprovider.InstanceType) []cloudprovider.Mark {
	names := map[string]bool{}
	for _, it := range its {
		names[it.Name] = true
	}
	var out []cloudprovider.Mark
	for _, m := range marks {
		if len(out) < maxMarks && (m.Offering.InstanceType == "" || names[m.Offering.InstanceType]) {
			out = append(out, m)
		}
	}
	return out
}

// limits are the NodePool's limits against what its nodes (and in-flight
// NodeClaims) have, as the solver counts them.
func limits(np *v1.NodePool, nodes []*provisioning.Node) []Limit {
	if len(np.Spec.Limits) == 0 {
		return nil
	}
	used := corev1.ResourceList{}
	count := int64(0)
	for _, n := range nodes {
		if n.NodePool != np.Name {
			continue
		}
		count++
		for name, q := range n.Capacity {
			total := used[name]
			total.Add(q)
			used[name] = total
		}
	}
	var out []Limit
	for _, name := range slices.Sorted(maps.Keys(np.Spec.Limits)) {
		limit := np.Spec.Limits[name]
		u := used[name]
		if name == "nodes" {
			u.Set(count)
		}
		out = append(out, Limit{Resource: string(name), Used: u.String(), Limit: limit.String()})
	}
	return out
}
