package aws

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"k8s.io/utils/clock"
)

// The CreateFleet batch window, the reference's (pkg/batcher/createfleet.go
// v1.14.1): a batch closes 35 ms after its last request, 1 s after its
// first, or at 1000 requests.
const (
	FleetBatchIdle     = 35 * time.Millisecond
	FleetBatchMax      = time.Second
	FleetBatchMaxItems = 1000
)

// fleetBatcher turns CreateFleet requests that are the same but for the
// NodeClaim they name, arriving within a window, into one fleet of as
// many instances, as the reference's CreateFleet batcher does: a
// scale-up's identical NodeClaims then cost one call of a few seconds,
// not one each, and one call of EC2's mutating-request budget.
type fleetBatcher struct {
	call  func(context.Context, *ec2.CreateFleetInput) (*ec2.CreateFleetOutput, error)
	clock clock.WithDelayedExecution
	// idle, max and maxItems close a batch (FleetBatchIdle, ...).
	idle, max time.Duration
	maxItems  int

	mu   sync.Mutex
	open map[string]*fleetBatch
}

// fleetBatch is the requests of one key gathered so far.
type fleetBatch struct {
	// ctx and first are the first request's: a batch of one sends it as
	// it is, tagged with its NodeClaim.
	ctx   context.Context
	first *ec2.CreateFleetInput
	// shared is the request without the NodeClaim's tag, which a batch of
	// several sends.
	shared  *ec2.CreateFleetInput
	callers []chan fleetShare
	// opened and last are when the first and the latest request came;
	// idle and max fire at the window's two ends.
	opened, last time.Time
	idle, max    clock.Timer
	sent         bool
}

// fleetShare is one request's answer: its own instance (at most one) with
// the fleet's errors, and whether it came from a fleet of several, whose
// instances carry no NodeClaim tag yet.
type fleetShare struct {
	out     *ec2.CreateFleetOutput
	batched bool
	err     error
}

func newFleetBatcher(call func(context.Context, *ec2.CreateFleetInput) (*ec2.CreateFleetOutput, error), clk clock.WithDelayedExecution, idle, maxWait time.Duration, maxItems int) *fleetBatcher {
	return &fleetBatcher{call: call, clock: clk, idle: idle, max: maxWait, maxItems: maxItems, open: map[string]*fleetBatch{}}
}

// createFleet adds in, a fleet of one instance, to the open batch of the
// same request, or opens one, and waits for the batch's answer.
func (b *fleetBatcher) createFleet(ctx context.Context, in *ec2.CreateFleetInput) fleetShare {
	return <-b.add(ctx, in)
}

// add puts in into its batch and returns where the batch's answer for it
// will come.
func (b *fleetBatcher) add(ctx context.Context, in *ec2.CreateFleetInput) <-chan fleetShare {
	answer := make(chan fleetShare, 1)
	shared := withoutNodeClaimTag(in)
	raw, err := json.Marshal(shared)
	if err != nil {
		answer <- fleetShare{err: fmt.Errorf("hashing the fleet request, %w", err)}
		return answer
	}
	key := string(raw)
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.clock.Now()
	bt := b.open[key]
	if bt != nil && !now.Before(bt.closes(b.idle, b.max)) {
		// Its window is over; its timer's send is under way.
		delete(b.open, key)
		bt = nil
	}
	if bt == nil {
		bt = &fleetBatch{ctx: ctx, first: in, shared: shared, opened: now}
		b.open[key] = bt
		bt.max = b.clock.AfterFunc(b.max, func() { go b.flush(key, bt) })
	} else {
		bt.idle.Stop()
	}
	bt.last = now
	bt.callers = append(bt.callers, answer)
	if len(bt.callers) >= b.maxItems {
		delete(b.open, key)
		go b.flush(key, bt)
		return answer
	}
	bt.idle = b.clock.AfterFunc(b.idle, func() { go b.flush(key, bt) })
	return answer
}

// closes is when the batch's window ends.
func (bt *fleetBatch) closes(idle, maxWait time.Duration) time.Time {
	end := bt.last.Add(idle)
	if hard := bt.opened.Add(maxWait); hard.Before(end) {
		return hard
	}
	return end
}

// flush sends the batch, once, and hands out its answers.
func (b *fleetBatcher) flush(key string, bt *fleetBatch) {
	b.mu.Lock()
	if bt.sent {
		b.mu.Unlock()
		return
	}
	bt.sent = true
	if b.open[key] == bt {
		delete(b.open, key)
	}
	bt.max.Stop()
	if bt.idle != nil {
		bt.idle.Stop()
	}
	callers := bt.callers
	b.mu.Unlock()
	for i, share := range b.send(bt, len(callers)) {
		callers[i] <- share
	}
}

// send makes the batch's one CreateFleet call and shares its answer out:
// the first request itself when alone; else the request without the
// NodeClaim tag for n instances, each instance to one caller in turn and
// the fleet's errors to all, so a caller left without an instance (EC2
// fulfilled the fleet in part) gets the errors that say why. The call
// outlives a caller's cancellation: it is the others' too.
func (b *fleetBatcher) send(bt *fleetBatch, n int) []fleetShare {
	ctx := context.WithoutCancel(bt.ctx)
	shares := make([]fleetShare, n)
	if n == 1 {
		out, err := b.call(ctx, bt.first)
		shares[0] = fleetShare{out: out, err: err}
		return shares
	}
	in := *bt.shared
	spec := *in.TargetCapacitySpecification
	spec.TotalTargetCapacity = awssdk.Int32(int32(n))
	in.TargetCapacitySpecification = &spec
	out, err := b.call(ctx, &in)
	if err != nil {
		for i := range shares {
			shares[i] = fleetShare{batched: true, err: err}
		}
		return shares
	}
	next := 0
	for _, inst := range out.Instances {
		for _, id := range inst.InstanceIds {
			if next == n {
				break // more than asked for: EC2 does not, and no caller could own it
			}
			one := inst
			one.InstanceIds = []string{id}
			shares[next] = fleetShare{batched: true, out: &ec2.CreateFleetOutput{FleetId: out.FleetId, Errors: out.Errors, Instances: []ec2types.CreateFleetInstance{one}}}
			next++
		}
	}
	for i := next; i < n; i++ {
		shares[i] = fleetShare{batched: true, out: &ec2.CreateFleetOutput{FleetId: out.FleetId, Errors: out.Errors}}
	}
	return shares
}

// withoutNodeClaimTag is in without the karpenter.sh/nodeclaim tag, the
// only part of a launch's request that names its NodeClaim (launch.go's
// fleet): what requests for identical NodeClaims share.
func withoutNodeClaimTag(in *ec2.CreateFleetInput) *ec2.CreateFleetInput {
	out := *in
	out.TagSpecifications = make([]ec2types.TagSpecification, len(in.TagSpecifications))
	for i, ts := range in.TagSpecifications {
		ts.Tags = slices.DeleteFunc(slices.Clone(ts.Tags), func(t ec2types.Tag) bool { return awssdk.ToString(t.Key) == TagNodeClaim })
		out.TagSpecifications[i] = ts
	}
	return &out
}
