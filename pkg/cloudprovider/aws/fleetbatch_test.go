package aws

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	gocmp "github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"
)

// fakeFleets answers CreateFleet with up to capacity instances of one
// override (all that is asked when capacity is 0), recording each call's
// size and NodeClaim tags.
type fakeFleets struct {
	capacity int
	mu       sync.Mutex
	calls    []string
	next     int
}

func (f *fakeFleets) call(_ context.Context, in *ec2.CreateFleetInput) (*ec2.CreateFleetOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := int(awssdk.ToInt32(in.TargetCapacitySpecification.TotalTargetCapacity))
	f.calls = append(f.calls, fmt.Sprintf("%s x%d tagged %q", awssdk.ToString(in.Context), n, nodeClaimTagOf(in)))
	out := &ec2.CreateFleetOutput{FleetId: awssdk.String("fleet-1")}
	inst := ec2types.CreateFleetInstance{InstanceType: "m5.large", SubnetId: awssdk.String("subnet-a")}
	for range n {
		if f.capacity > 0 && len(inst.InstanceIds) == f.capacity {
			out.Errors = []ec2types.CreateFleetError{{ErrorCode: awssdk.String("InsufficientInstanceCapacity")}}
			break
		}
		f.next++
		inst.InstanceIds = append(inst.InstanceIds, fmt.Sprintf("i-%d", f.next))
	}
	if len(inst.InstanceIds) > 0 {
		out.Instances = []ec2types.CreateFleetInstance{inst}
	}
	return out, nil
}

func nodeClaimTagOf(in *ec2.CreateFleetInput) string {
	for _, ts := range in.TagSpecifications {
		for _, t := range ts.Tags {
			if awssdk.ToString(t.Key) == TagNodeClaim {
				return awssdk.ToString(t.Value)
			}
		}
	}
	return ""
}

// batchRequest is a fleet of one for nodeClaim; group stands for what
// else the request says (its Context, here).
func batchRequest(group, nodeClaim string) *ec2.CreateFleetInput {
	tags := []ec2types.Tag{{Key: awssdk.String(TagNodePool), Value: awssdk.String("default")}, {Key: awssdk.String(TagNodeClaim), Value: awssdk.String(nodeClaim)}}
	return &ec2.CreateFleetInput{
		Type: ec2types.FleetTypeInstant, Context: awssdk.String(group),
		TargetCapacitySpecification: &ec2types.TargetCapacitySpecificationRequest{TotalTargetCapacity: awssdk.Int32(1), DefaultTargetCapacityType: ec2types.DefaultTargetCapacityTypeOnDemand},
		TagSpecifications:           []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeInstance, Tags: tags}, {ResourceType: ec2types.ResourceTypeFleet, Tags: tags}},
	}
}

// summary is what one request got, in short, and its instances.
func summary(s fleetShare) (string, []string) {
	if s.err != nil {
		return "error " + s.err.Error(), nil
	}
	var ids []string
	for _, inst := range s.out.Instances {
		ids = append(ids, inst.InstanceIds...)
	}
	return fmt.Sprintf("%d instance, %d errors, batched %t", len(ids), len(s.out.Errors), s.batched), ids
}

func TestFleetBatcher(t *testing.T) {
	const idle, maxWait = 35 * time.Millisecond, time.Second
	type req struct {
		group string
		// after is how long the clock moves before the request.
		after time.Duration
	}
	same := func(n int, after time.Duration) []req {
		rs := []req{{group: "a"}}
		for range n - 1 {
			rs = append(rs, req{group: "a", after: after})
		}
		return rs
	}
	repeat := func(s string, n int) []string {
		var out []string
		for range n {
			out = append(out, s)
		}
		return out
	}
	for _, tc := range []struct {
		name      string
		capacity  int
		maxItems  int
		reqs      []req
		wantCalls []string
		want      []string
	}{{
		name: "alone: the request as it is", reqs: same(1, 0),
		wantCalls: []string{`a x1 tagged "nc-0"`}, want: []string{"1 instance, 0 errors, batched false"},
	}, {
		name: "identical requests within the idle window: one fleet of three, untagged", reqs: same(3, 20*time.Millisecond),
		wantCalls: []string{`a x3 tagged ""`}, want: repeat("1 instance, 0 errors, batched true", 3),
	}, {
		name: "different requests: a fleet each", reqs: []req{{group: "a"}, {group: "b"}},
		wantCalls: []string{`a x1 tagged "nc-0"`, `b x1 tagged "nc-1"`}, want: repeat("1 instance, 0 errors, batched false", 2),
	}, {
		name: "after the idle window: a new batch", reqs: same(2, idle),
		wantCalls: []string{`a x1 tagged "nc-0"`, `a x1 tagged "nc-1"`}, want: repeat("1 instance, 0 errors, batched false", 2),
	}, {
		// Requests 30 ms apart: 0 ms to 990 ms in the first batch, 1020 ms
		// in the next.
		name: "the max window closes a batch kept busy", reqs: same(35, 30*time.Millisecond),
		wantCalls: []string{`a x1 tagged "nc-34"`, `a x34 tagged ""`},
		want:      append(repeat("1 instance, 0 errors, batched true", 34), "1 instance, 0 errors, batched false"),
	}, {
		name: "max items: a full batch goes at once", maxItems: 2, reqs: same(3, 0),
		wantCalls: []string{`a x1 tagged "nc-2"`, `a x2 tagged ""`},
		want:      []string{"1 instance, 0 errors, batched true", "1 instance, 0 errors, batched true", "1 instance, 0 errors, batched false"},
	}, {
		name: "partly fulfilled: the one left without an instance gets the errors", capacity: 2, reqs: same(3, 0),
		wantCalls: []string{`a x3 tagged ""`},
		want:      []string{"1 instance, 1 errors, batched true", "1 instance, 1 errors, batched true", "0 instance, 1 errors, batched true"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			fleets := &fakeFleets{capacity: tc.capacity}
			b := newFleetBatcher(fleets.call, clk, idle, maxWait, cmp.Or(tc.maxItems, FleetBatchMaxItems))
			var answers []<-chan fleetShare
			for i, r := range tc.reqs {
				clk.Step(r.after)
				answers = append(answers, b.add(context.Background(), batchRequest(r.group, fmt.Sprintf("nc-%d", i))))
			}
			// Every window still open ends.
			clk.Step(maxWait)
			var got []string
			seen := map[string]bool{}
			for _, a := range answers {
				s, ids := summary(<-a)
				got = append(got, s)
				for _, id := range ids {
					if seen[id] {
						t.Errorf("instance %s handed out twice", id)
					}
					seen[id] = true
				}
			}
			fleets.mu.Lock()
			calls := slices.Sorted(slices.Values(fleets.calls))
			fleets.mu.Unlock()
			if diff := gocmp.Diff(tc.wantCalls, calls); diff != "" {
				t.Errorf("CreateFleet calls (-want +got):\n%s", diff)
			}
			if diff := gocmp.Diff(tc.want, got); diff != "" {
				t.Errorf("answers (-want +got):\n%s", diff)
			}
		})
	}
}
