package cloudprovider

import (
	"context"
	"fmt"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// InstanceGone asks the cloud whether a NodeClaim's instance is gone: it
// never launched one, or the cloud no longer has it.
func InstanceGone(ctx context.Context, cloud CloudProvider, nc *v1.NodeClaim) (bool, error) {
	if nc.Status.ProviderID == "" {
		return true, nil
	}
	_, err := cloud.Get(ctx, nc.Status.ProviderID)
	if IsNodeClaimNotFoundError(err) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("getting the instance of nodeclaim %s, %w", nc.Name, err)
	}
	return false, nil
}
