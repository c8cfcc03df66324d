//go:build e2e

package disruption

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// pdbRule is a PDB as the guard enforces it: never fewer than
// minAvailable Ready, non-terminating pods of its selector.
type pdbRule struct {
	name         string
	selector     labels.Selector
	minAvailable int
	// armed once the rule held: pods still rolling out are not a
	// violation.
	armed  bool
	fewest int
}

// claimEvent is one change to a NodeClaim in the order the API server
// reported it.
type claimEvent struct {
	name string
	kind string // created, initialized, drifted, deleting, gone
	at   time.Time
}

// guard checks invariants over a scenario's pods and NodeClaims as the
// API server reports every change to them, independently of the
// controller's own predicates: PDBs are never violated, no more
// NodeClaims are deleting at once than the budget allows. It also records
// the NodeClaims' history (for pre-spin) and how long pods stayed Pending.
// It is fed by watches (watchGuard) or, in its own test, by hand.
type guard struct {
	mu          sync.Mutex
	rules       []*pdbRule
	maxDeleting int

	pods   map[string]*corev1.Pod
	claims map[string]*v1.NodeClaim
	// last is every NodeClaim as last seen, deleted ones included.
	last map[string]*v1.NodeClaim

	violations  []string
	peak        int
	history     []claimEvent
	pendingFrom map[string]time.Time
	longest     time.Duration
	longestPod  string
}

func newGuard(maxDeleting int) *guard {
	return &guard{maxDeleting: maxDeleting, pods: map[string]*corev1.Pod{}, claims: map[string]*v1.NodeClaim{}, last: map[string]*v1.NodeClaim{}, pendingFrom: map[string]time.Time{}}
}

// requirePDB adds a rule: the pods selector matches keep minAvailable
// Ready.
func (g *guard) requirePDB(name string, selector map[string]string, minAvailable int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.rules = append(g.rules, &pdbRule{name: name, selector: labels.SelectorFromSet(selector), minAvailable: minAvailable, fewest: -1})
}

// setMinAvailable moves the bound of the rule name: a PDB with
// maxUnavailable holds fewer pods once its Deployment scales down.
func (g *guard) setMinAvailable(name string, minAvailable int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, r := range g.rules {
		if r.name == name {
			r.minAvailable = minAvailable
		}
	}
}

func (g *guard) violate(format string, args ...any) {
	g.violations = append(g.violations, fmt.Sprintf(format, args...))
}

// observePod takes one pod change.
func (g *guard) observePod(typ watch.EventType, p *corev1.Pod, now time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	key := p.Namespace + "/" + p.Name
	_, known := g.pods[key]
	switch {
	case typ == watch.Deleted:
		delete(g.pods, key)
		g.settle(key, now)
	case p.Spec.NodeName != "":
		g.pods[key] = p
		g.settle(key, now)
	default:
		g.pods[key] = p
		if _, pending := g.pendingFrom[key]; !pending && !known && p.DeletionTimestamp == nil {
			g.pendingFrom[key] = now
		}
	}
	for _, r := range g.rules {
		ready := 0
		for _, q := range g.pods {
			if q.DeletionTimestamp == nil && podReady(q) && r.selector.Matches(labels.Set(q.Labels)) {
				ready++
			}
		}
		if ready >= r.minAvailable {
			r.armed = true
		}
		if !r.armed {
			continue
		}
		if r.fewest < 0 || ready < r.fewest {
			r.fewest = ready
		}
		if ready < r.minAvailable {
			g.violate("pdb %s: %d pods Ready after %s %s, minAvailable %d", r.name, ready, typ, key, r.minAvailable)
		}
	}
}

// settle ends a pod's Pending time.
func (g *guard) settle(key string, now time.Time) {
	from, ok := g.pendingFrom[key]
	if !ok {
		return
	}
	delete(g.pendingFrom, key)
	if d := now.Sub(from); d > g.longest {
		g.longest, g.longestPod = d, key
	}
}

// observeClaim takes one NodeClaim change.
func (g *guard) observeClaim(typ watch.EventType, nc *v1.NodeClaim, now time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	old, known := g.claims[nc.Name]
	record := func(kind string) { g.history = append(g.history, claimEvent{name: nc.Name, kind: kind, at: now}) }
	if !known {
		record("created")
	}
	was := func(cond string) bool {
		return known && meta.IsStatusConditionTrue(old.Status.Conditions, cond)
	}
	if meta.IsStatusConditionTrue(nc.Status.Conditions, v1.ConditionTypeInitialized) && !was(v1.ConditionTypeInitialized) {
		record("initialized")
	}
	if meta.IsStatusConditionTrue(nc.Status.Conditions, v1.ConditionTypeDrifted) && !was(v1.ConditionTypeDrifted) {
		record("drifted")
	}
	if nc.DeletionTimestamp != nil && (!known || old.DeletionTimestamp == nil) {
		record("deleting")
	}
	g.last[nc.Name] = nc
	if typ == watch.Deleted {
		delete(g.claims, nc.Name)
		record("gone")
	} else {
		g.claims[nc.Name] = nc
	}
	deleting := 0
	for _, c := range g.claims {
		if c.DeletionTimestamp != nil {
			deleting++
		}
	}
	g.peak = max(g.peak, deleting)
	if deleting > g.maxDeleting {
		var names []string
		for _, c := range g.claims {
			if c.DeletionTimestamp != nil {
				names = append(names, c.Name)
			}
		}
		slices.Sort(names)
		g.violate("%d nodeclaims deleting at once %v, the budget allows %d", deleting, names, g.maxDeleting)
	}
}

// finish ends the Pending time of pods still Pending at now.
func (g *guard) finish(now time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for key := range g.pendingFrom {
		g.settle(key, now)
	}
}

// Violations are the invariants broken so far.
func (g *guard) Violations() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.violations)
}

// Peak is the most NodeClaims seen deleting at once.
func (g *guard) Peak() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.peak
}

// LongestPending is the longest a pod first seen Pending stayed so.
func (g *guard) LongestPending() (time.Duration, string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.longest, g.longestPod
}

// History is the NodeClaims' changes in order.
func (g *guard) History() []claimEvent {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.history)
}

// Claims are the NodeClaims as last seen.
func (g *guard) Claims() []*v1.NodeClaim {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]*v1.NodeClaim, 0, len(g.claims))
	for _, nc := range g.claims {
		out = append(out, nc)
	}
	return out
}

// Last is NodeClaim name as last seen, even once deleted; nil if never.
func (g *guard) Last(name string) *v1.NodeClaim {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.last[name]
}

// preSpun checks that every NodeClaim of old was deleted only once a
// replacement (a NodeClaim not in old) had initialized for it and for
// every old one deleted before it.
func preSpun(history []claimEvent, old map[string]bool) []string {
	var out []string
	ready, deleted := 0, 0
	for _, e := range history {
		switch {
		case e.kind == "initialized" && !old[e.name]:
			ready++
		case e.kind == "deleting" && old[e.name]:
			deleted++
			if ready < deleted {
				out = append(out, fmt.Sprintf("nodeclaim %s was deleted with %d replacements initialized for %d deleted nodes", e.name, ready, deleted))
			}
		}
	}
	return out
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// watchGuard feeds g from watches on the namespace's pods and the
// NodePool's NodeClaims until the test ends; it returns once both are
// listed, so g knows the scenario's state before it changes anything. The
// guard's violations fail the test when it ends (before the scenario's
// own cleanup deletes its NodePool, which is not budgeted).
func watchGuard(t *testing.T, g *guard, ns string, np *v1.NodePool) {
	t.Helper()
	c, err := client.NewWithWatch(cluster.Config, client.Options{Scheme: cluster.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	listed := make(chan error, 2)
	wg.Add(2)
	go func() {
		defer wg.Done()
		follow(ctx, c, &corev1.PodList{}, &client.ListOptions{Namespace: ns}, listed, func(typ watch.EventType, obj client.Object) {
			g.observePod(typ, obj.(*corev1.Pod), time.Now())
		})
	}()
	go func() {
		defer wg.Done()
		follow(ctx, c, &v1.NodeClaimList{}, &client.ListOptions{LabelSelector: labels.SelectorFromSet(labels.Set{v1.NodePoolLabelKey: np.Name})}, listed,
			func(typ watch.EventType, obj client.Object) { g.observeClaim(typ, obj.(*v1.NodeClaim), time.Now()) })
	}()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			wg.Wait()
			g.finish(time.Now())
		})
	}
	for range 2 {
		if err := <-listed; err != nil {
			stop()
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		stop()
		for _, v := range g.Violations() {
			t.Error(v)
		}
	})
}

// follow lists, reports the list's items, then watches from the list's
// resource version, watching again from the last one seen should the API
// server close the watch (and listing again should it say that version
// is too old), until ctx ends.
func follow(ctx context.Context, c client.WithWatch, list client.ObjectList, opts *client.ListOptions, listed chan<- error, observe func(watch.EventType, client.Object)) {
	first := true
	for ctx.Err() == nil {
		if err := c.List(ctx, list, opts); err != nil {
			if first {
				listed <- fmt.Errorf("listing %T, %w", list, err)
				return
			}
			time.Sleep(100 * time.Millisecond)
			continue
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			listed <- err
			return
		}
		for _, o := range items {
			observe(watch.Added, o.(client.Object))
		}
		if first {
			listed <- nil
			first = false
		}
		rv := list.GetResourceVersion()
		for ctx.Err() == nil && rv != "" {
			raw := &metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true}
			w, err := c.Watch(ctx, list, &client.ListOptions{Raw: raw, LabelSelector: opts.LabelSelector, Namespace: opts.Namespace})
			if err != nil {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			for ev := range w.ResultChan() {
				obj, ok := ev.Object.(client.Object)
				if ev.Type == watch.Error || !ok {
					rv = "" // too old, most likely: list again
					break
				}
				rv = obj.GetResourceVersion()
				if ev.Type != watch.Bookmark {
					observe(ev.Type, obj)
				}
			}
			w.Stop()
		}
	}
}

// The guard is shown to fire on broken input: a PDB's pods below
// minAvailable, more NodeClaims deleting than the budget, a node deleted
// before its replacement initialized; and not to fire on a clean run.
func TestGuardFires(t *testing.T) {
	t.Parallel()
	now := time.Now()
	app := map[string]string{"app": "web"}
	pod := func(name string, ready bool, deleting bool) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: app}, Spec: corev1.PodSpec{NodeName: "n"}}
		status := corev1.ConditionFalse
		if ready {
			status = corev1.ConditionTrue
		}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}
		if deleting {
			p.DeletionTimestamp = &metav1.Time{Time: now}
		}
		return p
	}
	claim := func(name string, initialized, deleting bool) *v1.NodeClaim {
		nc := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if initialized {
			nc.Status.Conditions = []metav1.Condition{{Type: v1.ConditionTypeInitialized, Status: metav1.ConditionTrue}}
		}
		if deleting {
			nc.DeletionTimestamp = &metav1.Time{Time: now}
		}
		return nc
	}

	t.Run("pdb", func(t *testing.T) {
		g := newGuard(1)
		g.requirePDB("ns/web", app, 2)
		for _, n := range []string{"a", "b", "c"} {
			g.observePod(watch.Added, pod(n, true, false), now)
		}
		g.observePod(watch.Modified, pod("a", true, true), now) // evicted: 2 left, allowed
		g.observePod(watch.Added, pod("d", false, false), now)
		if v := g.Violations(); len(v) != 0 {
			t.Fatalf("a disruption the PDB allows was flagged: %v", v)
		}
		g.observePod(watch.Modified, pod("b", false, false), now) // 1 Ready
		if v := g.Violations(); len(v) != 1 {
			t.Errorf("want one violation for 1 Ready pod with minAvailable 2, got %v", v)
		}
	})
	t.Run("budget", func(t *testing.T) {
		g := newGuard(1)
		for _, n := range []string{"a", "b", "c"} {
			g.observeClaim(watch.Added, claim(n, true, false), now)
		}
		g.observeClaim(watch.Modified, claim("a", true, true), now)
		g.observeClaim(watch.Deleted, claim("a", true, true), now)
		g.observeClaim(watch.Modified, claim("b", true, true), now)
		if v := g.Violations(); len(v) != 0 || g.Peak() != 1 {
			t.Fatalf("one node at a time was flagged: %v (peak %d)", v, g.Peak())
		}
		g.observeClaim(watch.Modified, claim("c", true, true), now)
		if v := g.Violations(); len(v) != 1 || g.Peak() != 2 {
			t.Errorf("want one violation for two nodes deleting with a budget of 1, got %v (peak %d)", v, g.Peak())
		}
	})
	t.Run("pre-spin", func(t *testing.T) {
		old := map[string]bool{"a": true, "b": true}
		g := newGuard(1)
		g.observeClaim(watch.Added, claim("a", true, false), now)
		g.observeClaim(watch.Added, claim("b", true, false), now)
		g.observeClaim(watch.Added, claim("r1", false, false), now)
		g.observeClaim(watch.Modified, claim("r1", true, false), now)
		g.observeClaim(watch.Modified, claim("a", true, true), now)
		if v := preSpun(g.History(), old); len(v) != 0 {
			t.Fatalf("a node deleted after its replacement initialized was flagged: %v", v)
		}
		g.observeClaim(watch.Added, claim("r2", false, false), now)
		g.observeClaim(watch.Modified, claim("b", true, true), now)
		if v := preSpun(g.History(), old); len(v) != 1 {
			t.Errorf("want one violation for a node deleted before its replacement initialized, got %v", v)
		}
	})
	t.Run("pending", func(t *testing.T) {
		g := newGuard(1)
		p := pod("x", false, false)
		p.Spec.NodeName = ""
		g.observePod(watch.Added, p, now)
		bound := p.DeepCopy()
		bound.Spec.NodeName = "n"
		g.observePod(watch.Modified, bound, now.Add(3*time.Second))
		if d, name := g.LongestPending(); d != 3*time.Second || name != "ns/x" {
			t.Errorf("longest pending %s %s, want 3s ns/x", d, name)
		}
	})
}
