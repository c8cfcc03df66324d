package v1_test

import (
	"context"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-dev/capstan/pkg/test"
)

// The Nodes column reads status.nodes, as the reference's
// (pkg/apis/v1/nodepool.go, v1.14.1); status.nodes comes with static
// NodePools, so the status is written as the reference's clients write it.
func TestNodePoolNodesColumn(t *testing.T) {
	ctx := context.Background()
	np := test.NodePool()
	if err := env.Client.Create(ctx, np); err != nil {
		t.Fatal(err)
	}
	patch := client.RawPatch("application/merge-patch+json", []byte(`{"status":{"nodes":3}}`))
	if err := env.Client.Status().Patch(ctx, np, patch); err != nil {
		t.Fatal(err)
	}
	_, cells := table(t, "nodepools", np.Name)
	if got := cells[2]; got != "3" && got != float64(3) {
		t.Errorf("Nodes column %v, want 3", got)
	}
}
