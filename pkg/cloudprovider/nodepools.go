package cloudprovider

import (
	"context"
	"errors"
	"fmt"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// InstanceTypesByNodePool asks the cloud for each NodePool's instance
// types: what a shell (the controllers' cluster state, the simulator)
// gathers before a pure step, which takes them as a value (state.BuildWith).
// A NodePool whose NodeClass is of a kind the cloud does not serve,
// missing or not ready is left out and recorded with why in unusable (its
// pods report it); other errors fail.
//
// The cloud is asked once per NodeClass, as its answer depends on the
// NodeClass only (GetInstanceTypes): NodePools on one NodeClass share one
// slice of instance types, so a NodePool costs no copy of them.
func InstanceTypesByNodePool(ctx context.Context, cp CloudProvider, nodePools []v1.NodePool) (its map[string][]*InstanceType, unusable map[string]string, err error) {
	its, unusable = map[string][]*InstanceType{}, map[string]string{}
	type answer struct {
		types    []*InstanceType
		notReady string
	}
	byClass := map[v1.NodeClassReference]answer{}
	for i := range nodePools {
		np := &nodePools[i]
		ref := np.Spec.Template.Spec.NodeClassRef
		if err := CheckNodeClassRef(cp, ref); err != nil {
			unusable[np.Name] = err.Error()
			continue
		}
		a, asked := byClass[*ref]
		if !asked {
			types, err := cp.GetInstanceTypes(ctx, np)
			switch {
			case IsNodeClassNotReadyError(err):
				a.notReady = err.Error()
			case err != nil:
				return nil, nil, errors.Join(fmt.Errorf("getting instance types for nodepool %s", np.Name), err)
			}
			a.types = types
			byClass[*ref] = a
		}
		if a.notReady != "" {
			unusable[np.Name] = a.notReady
			continue
		}
		its[np.Name] = a.types
	}
	return its, unusable, nil
}
