package simulator_test

import (
	"testing"
	"time"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/simulator"
)

// A static NodePool scales in simulate only when the controller would
// call it Ready: its NodeClass served and its capstan.dev annotations
// valid (the ValidationSucceeded condition, pkg/admission), as the
// staticpool controller waits for Ready (docs/static.md).
func TestStaticNodePoolScalesOnlyWhenReady(t *testing.T) {
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		want        int
	}{
		{"ready: its replicas", nil, 3},
		{"an invalid capstan.dev annotation: not Ready, none", map[string]string{v1.ReturnToPreferredAnnotationKey: "true"}, 0},
		{"a valid capstan.dev annotation: its replicas", map[string]string{v1.ReturnToPreferredAnnotationKey: v1.ReturnToPreferredDisabled}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := loadExample(t, "static-nodepool")
			for i := range set.NodePools {
				if set.NodePools[i].Name == "base" {
					set.NodePools[i].Annotations = tc.annotations
				}
			}
			r := run(t, set, func(o *simulator.Options) { o.Duration = 5 * time.Minute })
			if got := len(nodesWhere(r, func(n simulator.Node) bool { return n.NodePool == "base" })); got != tc.want {
				t.Errorf("%d base nodes, want %d", got, tc.want)
			}
		})
	}
}
