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
func InstanceTypesByNodePool(ctx context.Context, cp CloudProvider, nodePools []v1.NodePool) (its map[string][]*InstanceType, unusable map[string]string, err error) {
	its, unusable = map[string][]*InstanceType{}, map[string]string{}
	for i := range nodePools {
		np := &nodePools[i]
		if err := CheckNodeClassRef(cp, np.Spec.Template.Spec.NodeClassRef); err != nil {
			unusable[np.Name] = err.Error()
			continue
		}
		types, err := cp.GetInstanceTypes(ctx, np)
		if err != nil {
			if IsNodeClassNotReadyError(err) {
				unusable[np.Name] = err.Error()
				continue
			}
			return nil, nil, errors.Join(fmt.Errorf("getting instance types for nodepool %s", np.Name), err)
		}
		its[np.Name] = types
	}
	return its, unusable, nil
}
