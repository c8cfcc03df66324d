package invariants

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// recorder is a test as Watch sees it: it records what fails it and the
// cleanups it is given.
type recorder struct {
	testing.TB // unset: only the methods below are called
	mu         sync.Mutex
	errors     []string
	fatal      string
	cleanups   []func()
}

func (r *recorder) Helper() {}

func (r *recorder) Error(args ...any) { r.Errorf("%s", fmt.Sprint(args...)) }

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.mu.Lock()
	r.fatal = fmt.Sprintf(format, args...)
	r.mu.Unlock()
	runtime.Goexit()
}

func (r *recorder) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }

// run calls f as a test would, in a goroutine of its own, then its
// cleanups, last first.
func (r *recorder) run(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	<-done
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

// Without an API server to list from, Watch fails the test at once, and
// violations found before it watched fail it too.
func TestWatchFailsWithoutAnAPIServer(t *testing.T) {
	t.Parallel()
	scheme := k8sruntime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := v1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := New(Options{PendingBound: time.Second})
	c.ObservePod(watch.Added, pod("x", unbound), t0)
	c.ObservePod(watch.Modified, pod("x"), at(2))
	r := &recorder{}
	r.run(func() {
		c.Watch(r, &rest.Config{Host: "http://127.0.0.1:1", Timeout: 5 * time.Second}, scheme, "ns", "np")
		t.Error("Watch returned without its lists")
	})
	if !strings.Contains(r.fatal, "listing") {
		t.Errorf("Watch failed with %q, want a failed list", r.fatal)
	}
	if len(r.errors) != 1 || !strings.Contains(r.errors[0], "pod ns/x was Pending for 2s") {
		t.Errorf("the test failed with %q, want the violation found before", r.errors)
	}
}

// The inventory is polled until the watch ends; a state file that cannot
// be read is skipped, and one never read fails the test.
func TestPollInventory(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "sim-state.json")
	if err := os.WriteFile(path, []byte(stateFile[:40]), 0o600); err != nil {
		t.Fatal(err)
	}
	c := New(Options{SimState: path, NodePool: "np", GCPeriod: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.pollInventory(ctx, time.Millisecond)
	}()
	waitFor(t, func() bool { _, err := c.inventoryReads(); return err != nil })
	if reads, _ := c.inventoryReads(); reads != 0 {
		t.Fatalf("%d reads of a half-written state file", reads)
	}
	if err := c.inventoryUnread(); err == nil || !strings.Contains(err.Error(), "never read") {
		t.Errorf("an inventory never read passed: %v", err)
	}
	if err := os.WriteFile(path, []byte(stateFile), 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { reads, _ := c.inventoryReads(); return reads > 0 })
	cancel()
	<-done
	if err := c.inventoryUnread(); err != nil {
		t.Error(err)
	}
	if err := New(Options{}).inventoryUnread(); err != nil {
		t.Errorf("an inventory not to be checked failed the test: %v", err)
	}
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for range 10000 {
		if cond() {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("timed out")
}

// A list after a broken watch reports as deleted what it no longer holds,
// then what it holds.
func TestRelisted(t *testing.T) {
	t.Parallel()
	obj := func(name string) client.Object {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}}
	}
	seen := map[string]client.Object{"ns/a": obj("a"), "ns/b": obj("b"), "ns/c": obj("c")}
	var got []string
	relisted(seen, []client.Object{obj("b"), obj("d")}, func(typ watch.EventType, o client.Object) {
		got = append(got, fmt.Sprintf("%s %s", typ, o.GetName()))
	})
	slices.Sort(got[:2])
	want := []string{"DELETED a", "DELETED c", "ADDED b", "ADDED d"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}
