package invariants

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/watch"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// The checker is shown to fire on broken input: a PDB's pods below
// minAvailable, more NodeClaims deleting than the budget, a node deleted
// before its replacement initialized; and not to fire on a clean run.
func TestCheckerFires(t *testing.T) {
	t.Parallel()
	budgets := map[v1.DisruptionReason]int{v1.DisruptionReasonEmpty: 1, v1.DisruptionReasonUnderutilized: 1, v1.DisruptionReasonDrifted: 1}

	t.Run("pdb", func(t *testing.T) {
		c := New(Options{})
		c.RequirePDB("ns/web", app, 2)
		for _, n := range []string{"a", "b", "c"} {
			c.ObservePod(watch.Added, pod(n), t0)
		}
		c.ObservePod(watch.Modified, pod("a", terminating), t0) // evicted: 2 left, allowed
		c.ObservePod(watch.Added, pod("d", notReady), t0)
		expectViolations(t, c, 0)
		c.ObservePod(watch.Modified, pod("b", notReady), t0) // 1 Ready
		c.ObservePod(watch.Modified, pod("c", notReady), t0) // the same breach
		expectViolations(t, c, 1, "ns/web", "ns/a (on n, Ready, terminating)", "ns/b (on n, not Ready)")
		c.ObservePod(watch.Modified, pod("b"), t0)
		c.ObservePod(watch.Modified, pod("d"), t0) // held again
		c.ObservePod(watch.Deleted, pod("d"), t0)  // a new breach
		expectViolations(t, c, 2)
	})
	t.Run("pdb rolling out", func(t *testing.T) {
		c := New(Options{})
		c.RequirePDB("ns/web", app, 2)
		c.ObservePod(watch.Added, pod("a", notReady), t0)
		c.ObservePod(watch.Modified, pod("a"), t0)
		expectViolations(t, c, 0) // never held yet
		c.ObservePod(watch.Added, pod("b"), t0)
		c.SetMinAvailable("ns/web", 1) // scaled down
		c.ObservePod(watch.Deleted, pod("b"), t0)
		expectViolations(t, c, 0)
	})
	t.Run("budget", func(t *testing.T) {
		c := New(Options{Budgets: budgets})
		for _, n := range []string{"a", "b", "c"} {
			c.ObserveClaim(watch.Added, claim(n, initialized), t0)
		}
		c.ObserveClaim(watch.Modified, claim("a", initialized, disrupted(v1.DisruptionReasonEmpty), deleting), t0)
		c.ObserveClaim(watch.Deleted, claim("a", initialized, disrupted(v1.DisruptionReasonEmpty), deleting), t0)
		c.ObserveClaim(watch.Modified, claim("b", initialized, disrupted(v1.DisruptionReasonEmpty), deleting), t0)
		expectViolations(t, c, 0)
		if c.Peak() != 1 {
			t.Fatalf("peak %d, want 1", c.Peak())
		}
		c.ObserveClaim(watch.Modified, claim("c", initialized, disrupted(v1.DisruptionReasonEmpty), deleting), t0)
		expectViolations(t, c, 1, "b (", "c (", "for Empty, the budget allows 1")
		if c.Peak() != 2 || c.PeakVoluntary() != 2 {
			t.Errorf("peak %d, voluntary %d; want 2, 2", c.Peak(), c.PeakVoluntary())
		}
	})
	t.Run("pre-spin", func(t *testing.T) {
		old := map[string]bool{"a": true, "b": true}
		c := New(Options{Budgets: budgets})
		c.ObserveClaim(watch.Added, claim("a", initialized), t0)
		c.ObserveClaim(watch.Added, claim("b", initialized), t0)
		c.ObserveClaim(watch.Added, claim("r1"), t0)
		c.ObserveClaim(watch.Modified, claim("r1", initialized), t0)
		c.ObserveClaim(watch.Modified, claim("a", initialized, deleting), t0)
		if v := PreSpun(c.History(), old); len(v) != 0 {
			t.Fatalf("a node deleted after its replacement initialized was flagged: %v", v)
		}
		c.ObserveClaim(watch.Added, claim("r2"), t0)
		c.ObserveClaim(watch.Modified, claim("b", initialized, deleting), t0)
		if v := PreSpun(c.History(), old); len(v) != 1 {
			t.Errorf("want one violation for a node deleted before its replacement initialized, got %v", v)
		}
	})
	t.Run("pending", func(t *testing.T) {
		c := New(Options{})
		c.ObservePod(watch.Added, pod("x", unbound), t0)
		c.ObservePod(watch.Modified, pod("x"), at(3))
		if d, name := c.LongestPending(); d != 3*time.Second || name != "ns/x" {
			t.Errorf("longest pending %s %s, want 3s ns/x", d, name)
		}
	})
}

// The history records each change once, in order; Claims and Last say
// what exists and what was.
func TestHistory(t *testing.T) {
	t.Parallel()
	c := New(Options{})
	c.ObserveClaim(watch.Added, claim("a"), at(0))
	c.ObserveClaim(watch.Modified, claim("a", initialized), at(1))
	c.ObserveClaim(watch.Modified, claim("a", initialized), at(2))
	c.ObserveClaim(watch.Added, claim("b", initialized), at(3))
	c.ObserveClaim(watch.Modified, claim("a", initialized, func(nc *v1.NodeClaim) {
		nc.Status.Conditions = append(nc.Status.Conditions, conditionTrue(v1.ConditionTypeDrifted))
	}), at(4))
	c.ObserveClaim(watch.Modified, claim("a", initialized, deleting), at(5))
	c.ObserveClaim(watch.Deleted, claim("a", initialized, deleting), at(6))
	want := []ClaimEvent{{"a", Created, at(0)}, {"a", Initialized, at(1)}, {"b", Created, at(3)}, {"b", Initialized, at(3)},
		{"a", Drifted, at(4)}, {"a", Deleting, at(5)}, {"a", Gone, at(6)}}
	if diff := cmp.Diff(want, c.History()); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}
	if claims := c.Claims(); len(claims) != 1 || claims[0].Name != "b" {
		t.Errorf("claims %v, want b only", claims)
	}
	if nc := c.Last("a"); nc == nil || nc.DeletionTimestamp == nil {
		t.Errorf("last a %v, want it deleting", nc)
	}
	if nc := c.Last("z"); nc != nil {
		t.Errorf("last z %v, never seen", nc)
	}
}

// The checker shares no code with what it checks: its files import the
// standard library, Capstan's API types and Kubernetes' API and client
// libraries only.
func TestSharesNoCode(t *testing.T) {
	t.Parallel()
	allowed := []string{"github.com/capstan-dev/capstan/api/v1", "k8s.io/api/", "k8s.io/apimachinery/", "k8s.io/client-go/",
		"sigs.k8s.io/controller-runtime/pkg/client"}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			first, _, _ := strings.Cut(path, "/")
			if !strings.Contains(first, ".") {
				continue // the standard library
			}
			ok := false
			for _, a := range allowed {
				ok = ok || path == a || strings.HasPrefix(path, a) && strings.HasSuffix(a, "/")
			}
			if !ok {
				t.Errorf("%s imports %s: the checker must share no code with the controllers it checks", name, path)
			}
		}
	}
}
