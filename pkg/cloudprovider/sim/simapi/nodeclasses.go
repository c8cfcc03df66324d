package simapi

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
)

// NodeClasses implements sim.NodeClasses: it reads SimNodeClasses through a (cache-backed) client.
type NodeClasses struct {
	Client client.Reader
}

// SimNodeClass implements sim.NodeClasses.
func (n NodeClasses) SimNodeClass(ctx context.Context, name string) (*simv1alpha1.SimNodeClass, error) {
	nc := &simv1alpha1.SimNodeClass{}
	if err := n.Client.Get(ctx, client.ObjectKey{Name: name}, nc); err != nil {
		return nil, fmt.Errorf("getting simnodeclass %s, %w", name, err)
	}
	return nc, nil
}
