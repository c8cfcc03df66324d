package aws_test

import (
	"context"
	"sync"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/google/go-cmp/cmp"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/aws"
)

// fleetSizes records the TotalTargetCapacity of each CreateFleet call.
type fleetSizes struct {
	aws.EC2
	mu    sync.Mutex
	sizes []int32
}

func (f *fleetSizes) CreateFleet(ctx context.Context, in *ec2.CreateFleetInput, opts ...func(*ec2.Options)) (*ec2.CreateFleetOutput, error) {
	f.mu.Lock()
	f.sizes = append(f.sizes, awssdk.ToInt32(in.TargetCapacitySpecification.TotalTargetCapacity))
	f.mu.Unlock()
	return f.EC2.CreateFleet(ctx, in, opts...)
}

// Identical NodeClaims launched together go out as one fleet of as many
// instances, as the reference batches CreateFleet; each NodeClaim gets
// its own instance, tagged with its name afterwards (which each
// controller policy allows), so List names it and a retried Create finds
// it.
func TestIdenticalLaunchesShareOneFleetUnderEachPolicy(t *testing.T) {
	const n = 3
	for _, file := range policyFiles {
		t.Run(file, func(t *testing.T) {
			sizes := &fleetSizes{}
			// A window wide enough that the launches meet in it however
			// slowly the test machine runs them.
			window := aws.Options{FleetBatch: aws.FleetBatchOptions{Idle: 5 * time.Second, Max: 10 * time.Second}}
			p, class, _ := policyEnvWith(t, file, func(api aws.EC2) aws.EC2 { sizes.EC2 = api; return sizes }, window)
			ctx := context.Background()
			if err := p.Refresh(ctx); err != nil {
				t.Fatal(err)
			}
			claims := make([]*v1.NodeClaim, n)
			got := make([]*v1.NodeClaim, n)
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range claims {
				claims[i] = policyNodeClaim(class, v1.CapacityTypeOnDemand)
				wg.Go(func() { got[i], errs[i] = p.Create(ctx, claims[i]) })
			}
			wg.Wait()
			want, owners := map[string]string{}, map[string]string{}
			for i, err := range errs {
				if err != nil {
					t.Fatalf("launching %s: %v", claims[i].Name, err)
				}
				want[got[i].Status.ProviderID] = claims[i].Name
			}
			if diff := cmp.Diff([]int32{n}, sizes.sizes); diff != "" {
				t.Errorf("CreateFleet target capacities (-want +got):\n%s", diff)
			}
			listed, err := p.List(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, nc := range listed {
				owners[nc.Status.ProviderID] = nc.Name
			}
			if diff := cmp.Diff(want, owners); diff != "" {
				t.Errorf("instances' nodeclaim tags (-want +got):\n%s", diff)
			}
			again, err := p.Create(ctx, claims[0])
			if err != nil || again.Status.ProviderID != got[0].Status.ProviderID {
				t.Errorf("Create again of %s: %v, %v; want its instance %s", claims[0].Name, again, err, got[0].Status.ProviderID)
			}
		})
	}
}
