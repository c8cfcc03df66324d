package test

import "testing"

func TestValidNodePools(t *testing.T) {
	seen := map[string]bool{}
	for _, tc := range ValidNodePools() {
		if seen[tc.Name] || tc.Name == "" {
			t.Errorf("case name %q is empty or repeats", tc.Name)
		}
		seen[tc.Name] = true
		if tc.NodePool == nil || tc.NodePool.Spec.Template.Spec.NodeClassRef == nil {
			t.Errorf("%s: not a complete NodePool", tc.Name)
		}
	}
}
