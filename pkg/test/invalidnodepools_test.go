package test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Each case is told apart by name, says where it fails and why, and
// breaks a valid NodePool rather than being one.
func TestInvalidNodePools(t *testing.T) {
	seen := map[string]bool{}
	for _, tc := range InvalidNodePools() {
		if seen[tc.Name] || tc.Name == "" {
			t.Errorf("case name %q is empty or repeats", tc.Name)
		}
		seen[tc.Name] = true
		// "spec" itself for the rules across spec fields (static NodePools').
		if (tc.Field != "spec" && !strings.HasPrefix(tc.Field, "spec.")) || tc.Message == "" {
			t.Errorf("%s: field %q and message %q must name a spec field and a rule", tc.Name, tc.Field, tc.Message)
		}
		valid := NodePool()
		valid.Name = tc.NodePool.Name
		if cmp.Equal(valid, tc.NodePool) {
			t.Errorf("%s: the NodePool is the valid default", tc.Name)
		}
	}
	if len(seen) < 10 {
		t.Errorf("%d cases; want every rule covered", len(seen))
	}
}
