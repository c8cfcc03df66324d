package explain_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/disruption"
	"github.com/capstan-dev/capstan/pkg/explain"
	"github.com/capstan-dev/capstan/pkg/state"
)

// A node shows the capacity it holds for virtual pods, by their owner,
// where disruption places them (docs/batch.md, "Capacity buffers").
func TestExplainNodeHolds(t *testing.T) {
	nc := &v1.NodeClaim{}
	nc.Name, nc.Status.NodeName = "web-abcde", "node-a"
	virtual := func(kind, name string, i int, node string) *corev1.Pod {
		p := state.NewVirtualPod(kind, "team", name, i, corev1.PodTemplateSpec{})
		p.Spec.NodeName = node
		return &p
	}
	in := &disruption.Input{Virtual: []*corev1.Pod{
		virtual(state.KindCapacityBuffer, "warm", 0, "node-a"), virtual(state.KindCapacityBuffer, "warm", 1, "node-a"),
		virtual("ProvisioningRequest", "job", 0, "node-a"), virtual(state.KindCapacityBuffer, "warm", 2, "node-b"),
	}}
	got := explain.ForNode(explain.NodeInput{NodeClaim: nc, Disruption: in})
	want := []explain.Held{{For: "CapacityBuffer/team/warm", Pods: 2}, {For: "ProvisioningRequest/team/job", Pods: 1}}
	if diff := cmp.Diff(want, got.Holds); diff != "" {
		t.Errorf("holds (-want +got):\n%s", diff)
	}
	var b strings.Builder
	if err := explain.WriteNode(&b, got); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "holds capacity for: CapacityBuffer/team/warm (2 virtual pods)") {
		t.Errorf("text does not say what the node holds:\n%s", b.String())
	}
}
