package invariants

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// pdbRule is a PDB as the checker enforces it from the pods it sees:
// never fewer than minAvailable Ready, non-terminating pods of its
// selector.
type pdbRule struct {
	name         string
	selector     labels.Selector
	minAvailable int
	// armed once the rule held: pods still rolling out are not a
	// violation.
	armed bool
	// broken while it does not hold: a breach is reported when it starts.
	broken bool
}

// pdbStatus is what the checker knows of a PDB object's own status.
type pdbStatus struct {
	pdb *policyv1.PodDisruptionBudget
	// armed once the PDB reported it held.
	armed  bool
	broken bool
}

// RequirePDB adds a rule: the pods selector matches keep minAvailable
// Ready and not terminating, once they first did.
func (c *Checker) RequirePDB(name string, selector map[string]string, minAvailable int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rules = append(c.rules, &pdbRule{name: name, selector: labels.SelectorFromSet(selector), minAvailable: minAvailable})
}

// SetMinAvailable moves the bound of the rule name: a PDB with
// maxUnavailable holds fewer pods once its Deployment scales down.
func (c *Checker) SetMinAvailable(name string, minAvailable int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range c.rules {
		if r.name == name {
			r.minAvailable = minAvailable
		}
	}
}

// ObservePod takes one pod change at now.
func (c *Checker) ObservePod(typ watch.EventType, p *corev1.Pod, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := p.Namespace + "/" + p.Name
	old, known := c.pods[key]
	c.checkDoNotDisrupt(typ, old, p, now)
	switch {
	case typ == watch.Deleted:
		delete(c.pods, key)
		c.settle(key, now, "deleted")
	case p.DeletionTimestamp != nil:
		c.pods[key] = p
		c.settle(key, now, "terminating")
	case p.Spec.NodeName != "":
		c.pods[key] = p
		c.settle(key, now, "bound to "+p.Spec.NodeName)
	default:
		c.pods[key] = p
		if _, pending := c.pendingFrom[key]; !pending && !known {
			c.pendingFrom[key] = now
		}
	}
	for _, r := range c.rules {
		c.checkRule(r, fmt.Sprintf("%s %s", typ, key), now)
	}
}

// checkRule checks a RequirePDB rule after a pod change. The caller holds
// mu.
func (c *Checker) checkRule(r *pdbRule, after string, now time.Time) {
	matching := c.matching(r.selector)
	ready := 0
	for _, p := range matching {
		if p.DeletionTimestamp == nil && podReady(p) {
			ready++
		}
	}
	if ready >= r.minAvailable {
		r.armed, r.broken = true, false
		return
	}
	if r.armed && !r.broken {
		r.broken = true
		c.violate(now, "pdb %s: %d pods Ready after %s, minAvailable %d; its pods: %s", r.name, ready, after, r.minAvailable, describePods(matching))
	}
}

// matching are the pods selector matches, by name. The caller holds mu.
func (c *Checker) matching(selector labels.Selector) []*corev1.Pod {
	var out []*corev1.Pod
	for _, key := range slices.Sorted(maps.Keys(c.pods)) {
		if p := c.pods[key]; selector.Matches(labels.Set(p.Labels)) {
			out = append(out, p)
		}
	}
	return out
}

func describePods(pods []*corev1.Pod) string {
	if len(pods) == 0 {
		return "none"
	}
	out := make([]string, 0, len(pods))
	for _, p := range pods {
		out = append(out, describePod(p))
	}
	return strings.Join(out, ", ")
}

// settle ends a pod's Pending time at now (why says how): longer than the
// bound is a violation. The caller holds mu.
func (c *Checker) settle(key string, now time.Time, why string) {
	from, ok := c.pendingFrom[key]
	if !ok {
		return
	}
	delete(c.pendingFrom, key)
	d := now.Sub(from)
	if d > c.longest {
		c.longest, c.longestPod = d, key
	}
	if c.opts.PendingBound > 0 && d > c.opts.PendingBound {
		c.violate(now, "pod %s was Pending for %s from %s until %s, longer than the bound %s", key, d.Round(time.Millisecond), from.Format("15:04:05.000"), why, c.opts.PendingBound)
	}
}

// checkDoNotDisrupt flags a do-not-disrupt pod that starts terminating, or
// goes, while its node's NodeClaim is being disrupted voluntarily: only
// forceful disruption (expiration, interruption) or a manual deletion may
// take it. The caller holds mu.
func (c *Checker) checkDoNotDisrupt(typ watch.EventType, old, p *corev1.Pod, now time.Time) {
	if p.Annotations[v1.DoNotDisruptAnnotationKey] != "true" || p.Spec.NodeName == "" {
		return
	}
	if old != nil && old.DeletionTimestamp != nil {
		return // already judged when it started terminating
	}
	if typ != watch.Deleted && p.DeletionTimestamp == nil {
		return
	}
	nc := c.claimOn(p.Spec.NodeName)
	if nc == nil || !Voluntary(reason(nc)) {
		return
	}
	verb := "started terminating"
	if typ == watch.Deleted {
		verb = "was deleted"
	}
	c.violate(now, "pod %s has %s=true and %s while nodeclaim %s is disrupted voluntarily", describePod(p), v1.DoNotDisruptAnnotationKey, verb, describeClaim(nc))
}

// claimOn is the NodeClaim of node, as last seen (a live one first); nil
// if none. The caller holds mu.
func (c *Checker) claimOn(node string) *v1.NodeClaim {
	var found *v1.NodeClaim
	for _, name := range slices.Sorted(maps.Keys(c.last)) {
		nc := c.last[name]
		if nc.Status.NodeName != node {
			continue
		}
		if _, live := c.claims[name]; live {
			return nc
		}
		found = nc
	}
	return found
}

// ObservePDB takes one change to a PDB object at now: once its status
// reported it held, reporting fewer healthy pods than it requires is a
// violation (unless Options.IgnorePDBStatus).
func (c *Checker) ObservePDB(typ watch.EventType, pdb *policyv1.PodDisruptionBudget, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := pdb.Namespace + "/" + pdb.Name
	if typ == watch.Deleted {
		delete(c.pdbs, key)
		return
	}
	s := c.pdbs[key]
	if s == nil {
		s = &pdbStatus{}
		c.pdbs[key] = s
	}
	s.pdb = pdb
	st := pdb.Status
	if st.ObservedGeneration < pdb.Generation {
		return // its status is not about its spec yet
	}
	if st.CurrentHealthy >= st.DesiredHealthy {
		s.armed, s.broken = true, false
		return
	}
	if !s.armed || s.broken || c.opts.IgnorePDBStatus {
		return
	}
	s.broken = true
	pods := "unknown"
	if selector, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector); err == nil {
		pods = describePods(c.matching(selector))
	}
	c.violate(now, "pdb %s reports %d healthy pods, fewer than the %d it requires (%d expected, %d disruptions allowed); its pods: %s",
		key, st.CurrentHealthy, st.DesiredHealthy, st.ExpectedPods, st.DisruptionsAllowed, pods)
}
