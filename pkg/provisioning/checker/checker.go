package checker

import (
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	resourcehelper "k8s.io/component-helpers/resource"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	"github.com/capstan-dev/capstan/pkg/provisioning"
)

// Check returns every violation it finds, nil for a sound result.
func Check(in provisioning.Input, r provisioning.Result) error {
	var errs []error
	errs = append(errs, checkAccounting(in, r)...)
	errs = append(errs, checkNominations(in, r)...)
	errs = append(errs, checkTopology(in, r)...)
	errs = append(errs, checkPreferNoSchedule(in, r)...)
	booked := map[string]int{}
	used := map[string]corev1.ResourceList{}
	usedNodes := map[string]int64{}
	for _, n := range in.Nodes {
		add(used, n.NodePool, n.Capacity)
		usedNodes[n.NodePool]++
	}
	for i, c := range r.NewNodeClaims {
		nodes, err := launchable(c)
		if err != nil {
			errs = append(errs, fmt.Errorf("nodeclaim %d (%s): %w", i, c.NodePool, err))
			continue
		}
		maxCapacity := corev1.ResourceList{}
		reqs := requirements(in, c)
		for _, n := range nodes {
			errs = append(errs, checkNode(in, c, reqs, n, fmt.Sprintf("nodeclaim %d as %s/%s", i, n.instanceType.Name, n.offering))...)
			strict := in.Options.ReservationMode == provisioning.ReservationStrict
			if strict && n.offering.ReservationID != "" && c.ReservationID != n.offering.ReservationID {
				errs = append(errs, fmt.Errorf("nodeclaim %d could launch into reservation %s without booking it", i, n.offering.ReservationID))
			}
			for name, q := range n.instanceType.Capacity {
				if cur, ok := maxCapacity[name]; !ok || q.Cmp(cur) > 0 {
					maxCapacity[name] = q
				}
			}
		}
		if c.ReservationID != "" {
			booked[c.ReservationID]++
		}
		add(used, c.NodePool, maxCapacity)
		usedNodes[c.NodePool]++
	}
	errs = append(errs, checkReservations(in, booked)...)
	errs = append(errs, checkLimits(in, r, used, usedNodes)...)
	return errors.Join(errs...)
}

// checkAccounting: every pod is placed or reported exactly once, with a
// known reason.
func checkAccounting(in provisioning.Input, r provisioning.Result) []error {
	seen := map[types.UID]int{}
	key := func(p *corev1.Pod) types.UID { return types.UID(p.Namespace + "/" + p.Name) }
	for _, n := range r.Nominations {
		seen[key(n.Pod)]++
	}
	for _, c := range r.NewNodeClaims {
		for _, p := range c.Pods {
			seen[key(p)]++
		}
	}
	var errs []error
	for _, u := range r.Unplaced {
		seen[key(u.Pod)]++
		if u.Reason == "" || u.Message == "" {
			errs = append(errs, fmt.Errorf("pod %s unplaced without a reason and message", u.Pod.Name))
		}
	}
	for _, p := range in.Pods {
		if seen[key(p)] != 1 {
			errs = append(errs, fmt.Errorf("pod %s/%s accounted %d times, want once", p.Namespace, p.Name, seen[key(p)]))
		}
		delete(seen, key(p))
	}
	for k := range seen {
		errs = append(errs, fmt.Errorf("result names pod %s that was not in the input", k))
	}
	return errs
}

func checkNominations(in provisioning.Input, r provisioning.Result) []error {
	nodes := map[string]*provisioning.Node{}
	planned := map[string][]*corev1.Pod{}
	for _, n := range in.Nodes {
		nodes[n.Name] = n
		planned[n.Name] = append(planned[n.Name], n.Pods...)
	}
	var errs []error
	for _, nom := range r.Nominations {
		n, ok := nodes[nom.NodeName]
		if !ok {
			errs = append(errs, fmt.Errorf("pod %s nominated to unknown node %s", nom.Pod.Name, nom.NodeName))
			continue
		}
		if n.Deleting {
			errs = append(errs, fmt.Errorf("pod %s nominated to deleting node %s", nom.Pod.Name, n.Name))
		}
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: n.Labels}, Spec: corev1.NodeSpec{Taints: n.Taints}}
		errs = append(errs, fits(nom.Pod, node, "node "+n.Name)...)
		planned[n.Name] = append(planned[n.Name], nom.Pod)
	}
	for name, pods := range planned {
		if !nodes[name].InFlight || nodes[name].Allocatable != nil {
			errs = append(errs, checkResources(pods, nil, nodes[name].Allocatable, "node "+name)...)
		}
		errs = append(errs, checkPorts(inFlightDaemons(in, nodes[name]), pods, "node "+name)...)
	}
	return errs
}

// fits checks kube-scheduler's filters other than resources: required
// node affinity and node selector, and taints.
func fits(pod *corev1.Pod, node *corev1.Node, where string) []error {
	var errs []error
	if ok, err := nodeaffinity.GetRequiredNodeAffinity(pod).Match(node); err != nil || !ok {
		errs = append(errs, fmt.Errorf("pod %s does not match %s's labels %v (%w)", pod.Name, where, node.Labels, err))
	}
	taint, untolerated := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), node.Spec.Taints, pod.Spec.Tolerations, func(t *corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
	}, true)
	if untolerated {
		errs = append(errs, fmt.Errorf("pod %s does not tolerate %s's taint %s", pod.Name, where, taint.ToString()))
	}
	return errs
}

func checkResources(pods, daemons []*corev1.Pod, allocatable corev1.ResourceList, where string) []error {
	total := corev1.ResourceList{}
	for _, p := range append(pods, daemons...) {
		for name, q := range resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{}) {
			sum := total[name]
			sum.Add(q)
			total[name] = sum
		}
	}
	podCount := resource.NewQuantity(int64(len(pods)+len(daemons)), resource.DecimalSI)
	total[corev1.ResourcePods] = *podCount
	var errs []error
	for name, q := range total {
		if q.IsZero() {
			continue
		}
		alloc, ok := allocatable[name]
		if !ok || q.Cmp(alloc) > 0 {
			errs = append(errs, fmt.Errorf("%s over-committed: %s requests %s, allocatable %s", where, name, q.String(), alloc.String()))
		}
	}
	return errs
}

// checkPorts: no two pods take one host port. held are daemonsets', whose
// clashes among themselves are the cluster's, not the plan's: only pods are
// checked against them.
func checkPorts(held, pods []*corev1.Pod, where string) []error {
	type port struct {
		ip       string
		port     int32
		protocol corev1.Protocol
	}
	var used []port
	var errs []error
	for i, p := range append(slices.Clip(held), pods...) {
		// Regular init containers have exited before the pod runs; only
		// sidecars (restartable init containers) hold their ports.
		containers := slices.Clone(p.Spec.Containers)
		for _, c := range p.Spec.InitContainers {
			if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
				containers = append(containers, c)
			}
		}
		for _, c := range containers {
			for _, cp := range c.Ports {
				if cp.HostPort == 0 {
					continue
				}
				proto := cp.Protocol
				if proto == "" {
					proto = corev1.ProtocolTCP
				}
				for _, u := range used {
					if i < len(held) {
						break
					}
					if u.port == cp.HostPort && u.protocol == proto && (u.ip == cp.HostIP || u.ip == "" || cp.HostIP == "" || u.ip == "0.0.0.0" || cp.HostIP == "0.0.0.0") {
						errs = append(errs, fmt.Errorf("%s: host port %d/%s taken twice (pod %s)", where, cp.HostPort, proto, p.Name))
					}
				}
				used = append(used, port{cp.HostIP, cp.HostPort, proto})
			}
		}
	}
	return errs
}

func add(m map[string]corev1.ResourceList, pool string, rl corev1.ResourceList) {
	if m[pool] == nil {
		m[pool] = corev1.ResourceList{}
	}
	for name, q := range rl {
		sum := m[pool][name]
		sum.Add(q)
		m[pool][name] = sum
	}
}

func checkReservations(in provisioning.Input, booked map[string]int) []error {
	slots := map[string]int{}
	for _, its := range in.InstanceTypes {
		for _, it := range its {
			for _, o := range it.Offerings {
				if o.ReservationID != "" {
					slots[o.ReservationID] = max(slots[o.ReservationID], o.Available)
				}
			}
		}
	}
	var errs []error
	for id, n := range booked {
		if n > slots[id] && in.Options.ReservationMode == provisioning.ReservationStrict {
			errs = append(errs, fmt.Errorf("reservation %s over-booked: %d nodeclaims, %d free slots", id, n, slots[id]))
		}
	}
	return errs
}

// checkLimits: a NodePool that gained nodes stays within its limits
// (existing nodes alone may exceed limits lowered after they launched).
func checkLimits(in provisioning.Input, r provisioning.Result, used map[string]corev1.ResourceList, usedNodes map[string]int64) []error {
	grew := map[string]bool{}
	for _, c := range r.NewNodeClaims {
		grew[c.NodePool] = true
	}
	var errs []error
	for _, np := range in.NodePools {
		if !grew[np.Name] {
			continue
		}
		for name, limit := range np.Spec.Limits {
			if name == "nodes" {
				if usedNodes[np.Name] > limit.Value() {
					errs = append(errs, fmt.Errorf("nodepool %s: %d nodes exceed the limit %s", np.Name, usedNodes[np.Name], limit.String()))
				}
				continue
			}
			if q, ok := used[np.Name][name]; ok && q.Cmp(limit) > 0 {
				errs = append(errs, fmt.Errorf("nodepool %s: %s %s exceeds the limit %s", np.Name, name, q.String(), limit.String()))
			}
		}
	}
	return errs
}
