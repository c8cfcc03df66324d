package invariants

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// inventoryInterval is how often Watch reads the cloud's inventory.
const inventoryInterval = time.Second

// Watch feeds c until the test ends: from watches on namespace's pods and
// PDBs and on nodePool's NodeClaims and, with Options.SimState, from the
// cloud's inventory every second. It returns once all are listed, so c
// knows the scenario's state before the scenario changes anything. Every
// violation fails the test (t.Error) as it is found, with the objects
// involved; when the test ends (its cleanups run last first, so register
// Watch after a cleanup that deletes the NodePool, whose deletion is not
// budgeted) the watches stop, pods still Pending are judged, and an
// inventory never read is an error. scheme must know Capstan's API and
// Kubernetes' core and policy types.
func (c *Checker) Watch(t testing.TB, cfg *rest.Config, scheme *runtime.Scheme, namespace, nodePool string) {
	t.Helper()
	cl, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatalf("invariants: a client to watch with, %v", err)
	}
	c.mu.Lock()
	if c.opts.NodePool == "" {
		c.opts.NodePool = nodePool
	}
	earlier := slices.Clone(c.violations)
	c.report = func(v string) { t.Errorf("invariant violated: %s", v) }
	c.mu.Unlock()
	for _, v := range earlier {
		t.Errorf("invariant violated: %s", v)
	}

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	listed := make(chan error, 3)
	start := func(list client.ObjectList, opts *client.ListOptions, observe func(watch.EventType, client.Object, time.Time)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			follow(ctx, cl, list, opts, listed, func(typ watch.EventType, obj client.Object) { observe(typ, obj, time.Now()) })
		}()
	}
	start(&corev1.PodList{}, &client.ListOptions{Namespace: namespace}, func(typ watch.EventType, obj client.Object, now time.Time) {
		c.ObservePod(typ, obj.(*corev1.Pod), now)
	})
	start(&policyv1.PodDisruptionBudgetList{}, &client.ListOptions{Namespace: namespace}, func(typ watch.EventType, obj client.Object, now time.Time) {
		c.ObservePDB(typ, obj.(*policyv1.PodDisruptionBudget), now)
	})
	start(&v1.NodeClaimList{}, &client.ListOptions{LabelSelector: labels.SelectorFromSet(labels.Set{v1.NodePoolLabelKey: nodePool})},
		func(typ watch.EventType, obj client.Object, now time.Time) {
			c.ObserveClaim(typ, obj.(*v1.NodeClaim), now)
		})
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			wg.Wait()
			c.Finish(time.Now())
			c.mu.Lock()
			c.report = nil // the test is ending: later violations are only recorded
			c.mu.Unlock()
		})
	}
	for range 3 {
		if err := <-listed; err != nil {
			stop()
			t.Fatalf("invariants: %v", err)
		}
	}
	if c.opts.SimState != "" {
		c.readInventory(time.Now())
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.pollInventory(ctx, inventoryInterval)
		}()
	}
	t.Cleanup(func() {
		stop()
		if err := c.inventoryUnread(); err != nil {
			t.Error(err)
		}
	})
}

// readInventory reads the cloud's state file and observes it at now; a
// failed read is skipped (the file may be being rewritten), its error
// kept.
func (c *Checker) readInventory(now time.Time) {
	inv, err := ReadInventory(c.opts.SimState)
	if err != nil {
		c.inventoryFailed(err)
		return
	}
	c.ObserveInventory(inv, now)
}

// pollInventory reads the cloud's inventory every period until ctx ends.
func (c *Checker) pollInventory(ctx context.Context, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			c.readInventory(now)
		}
	}
}

// inventoryUnread is an error if the inventory was to be checked but was
// never read: the check would pass vacuously.
func (c *Checker) inventoryUnread() error {
	reads, err := c.inventoryReads()
	if c.opts.SimState == "" || reads > 0 {
		return nil
	}
	return fmt.Errorf("invariants: the cloud's inventory was never read, so never checked: %w", err)
}

// follow lists, reports the list's items, then watches from the list's
// resource version, watching again from the last one seen should the API
// server close the watch (and listing again should it say that version
// is too old, reporting as deleted what went meanwhile), until ctx ends.
// The first list's outcome goes to listed.
func follow(ctx context.Context, c client.WithWatch, list client.ObjectList, opts *client.ListOptions, listed chan<- error, observe func(watch.EventType, client.Object)) {
	first := true
	seen := map[string]client.Object{}
	note := func(typ watch.EventType, obj client.Object) {
		key := obj.GetNamespace() + "/" + obj.GetName()
		if typ == watch.Deleted {
			delete(seen, key)
		} else {
			seen[key] = obj
		}
		observe(typ, obj)
	}
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
			if first {
				listed <- fmt.Errorf("reading the list of %T, %w", list, err)
			}
			return
		}
		objs := make([]client.Object, 0, len(items))
		for _, o := range items {
			objs = append(objs, o.(client.Object))
		}
		relisted(seen, objs, note)
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
					note(ev.Type, obj)
				}
			}
			w.Stop()
		}
	}
}

// relisted reports a list's items: as deleted, those seen before (by
// "namespace/name") the list no longer holds, in no particular order; then
// the items, as added.
func relisted(seen map[string]client.Object, items []client.Object, observe func(watch.EventType, client.Object)) {
	now := map[string]bool{}
	for _, o := range items {
		now[o.GetNamespace()+"/"+o.GetName()] = true
	}
	for key, o := range seen {
		if !now[key] {
			observe(watch.Deleted, o)
		}
	}
	for _, o := range items {
		observe(watch.Added, o)
	}
}
