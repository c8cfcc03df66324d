package overlay

import (
	"context"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/api/v1alpha1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
)

// InstanceTypes asks the cloud for each NodePool's instance types
// (cloudprovider.InstanceTypesByNodePool, whose unusable NodePools it
// returns) and applies the overlays: the one place every shell gathers
// the instance types its decisions see.
func InstanceTypes(ctx context.Context, cp cloudprovider.CloudProvider, nodePools []v1.NodePool, overlays []v1alpha1.NodeOverlay) (Result, map[string]string, error) {
	its, unusable, err := cloudprovider.InstanceTypesByNodePool(ctx, cp, nodePools)
	if err != nil {
		return Result{}, nil, err
	}
	return Apply(nodePools, its, overlays), unusable, nil
}
