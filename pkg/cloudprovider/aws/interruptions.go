package aws

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/capstan-dev/capstan/pkg/cloudprovider"
)

// SQS is the part of the SQS API the provider calls to read the
// interruption queue; *sqs.Client implements it.
type SQS interface {
	GetQueueUrl(ctx context.Context, in *sqs.GetQueueUrlInput, opts ...func(*sqs.Options)) (*sqs.GetQueueUrlOutput, error)
	ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, opts ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	DeleteMessage(ctx context.Context, in *sqs.DeleteMessageInput, opts ...func(*sqs.Options)) (*sqs.DeleteMessageOutput, error)
}

// SpotNotice is how long before a spot interruption EC2 warns.
const SpotNotice = 2 * time.Minute

const (
	// DefaultInterruptionWait is how long one receive waits for a message
	// (SQS long polling): the most SQS allows, as the reference
	// (pkg/providers/sqs/sqs.go GetSQSMessages).
	DefaultInterruptionWait = 20 * time.Second
	// receiveBatch and visibilityTimeout are the reference's
	// MaxNumberOfMessages and VisibilityTimeout (seconds).
	receiveBatch      = 10
	visibilityTimeout = 20
	// maxReceives bounds one poll's drain: at most this many batches
	// (1,000 messages), so a queue filling faster than it is read cannot
	// hold a poll forever.
	maxReceives = 100
	// describeBatch is the most instance ids one DescribeInstances call
	// filters on: EC2 refuses more than 200 filter values per call with
	// FilterLimitExceeded (docs/aws.md, "Interruptions").
	describeBatch = 200
)

// interruptState is what the provider keeps between polls: the queue's
// notices until acknowledged or their instance is gone, the messages
// they came from until then, and the last instance status checks. mu
// is never held across an AWS call, nor while taking Provider.mu.
type interruptState struct {
	mu       sync.Mutex
	queueURL string
	notices  map[noticeKey]*queued
	// messages are the queue messages not deleted yet, by message id:
	// each is deleted once every notice it carried is done with.
	messages map[string]*pending
	// statusMu serializes status polls; status and statusAt are the last
	// poll's notices and when it ran.
	statusMu sync.Mutex
	status   []cloudprovider.InterruptionNotice
	statusAt time.Time
}

// queued is one notice from the queue; marked once its capacity
// reservation was marked unavailable; messages are the ids of the
// messages that carried it.
type queued struct {
	notice   cloudprovider.InterruptionNotice
	marked   bool
	messages []string
}

// pending is a message received and not deleted: its latest receipt
// handle (a redelivery's replaces the last) and how many queued notices
// it still carries.
type pending struct {
	receipt string
	notices int
}

// noticeKey is one notice per instance and kind.
type noticeKey struct {
	instance string
	kind     cloudprovider.InterruptionKind
}

// addLocked records message id's notice n for instances ids, once per
// instance and kind; a redelivered message only renews its receipt
// handle. It returns the receipt to delete at once when the message
// carries no instance. mu held.
func (s *interruptState) addLocked(id, receipt string, ids []string, n cloudprovider.InterruptionNotice) (deleteNow string) {
	if m := s.messages[id]; m != nil {
		m.receipt = receipt
		return ""
	}
	m := &pending{receipt: receipt}
	for _, inst := range ids {
		k := noticeKey{inst, n.Kind}
		q := s.notices[k]
		if q == nil {
			q = &queued{notice: n}
			s.notices[k] = q
		}
		if !slices.Contains(q.messages, id) {
			q.messages = append(q.messages, id)
			m.notices++
		}
	}
	if m.notices == 0 {
		return receipt
	}
	s.messages[id] = m
	return ""
}

// dropLocked forgets notice k and returns the receipt handles of the
// messages no notice needs any more. mu held.
func (s *interruptState) dropLocked(k noticeKey) []string {
	q := s.notices[k]
	if q == nil {
		return nil
	}
	delete(s.notices, k)
	var done []string
	for _, id := range q.messages {
		if m := s.messages[id]; m != nil {
			if m.notices--; m.notices == 0 {
				done = append(done, m.receipt)
				delete(s.messages, id)
			}
		}
	}
	return done
}

// Interruptions implements cloudprovider.InterruptionSource: the
// EventBridge events the interruption queue (Options.InterruptionQueue,
// as the reference's --interruption-queue) carries for the cluster's
// instances (spot interruption warnings, rebalance recommendations, AWS
// Health scheduled changes, state changes, capacity reservation
// interruption warnings) and the failed instance status checks
// (instancestatus.go). A queue notice is returned until Acknowledge
// drops it or its instance is gone; a status notice while the checks
// still report it. Without a queue there are only status notices.
func (p *Provider) Interruptions(ctx context.Context) ([]cloudprovider.InterruptionNotice, error) {
	status, err := p.statusNotices(ctx)
	if err != nil {
		return nil, err
	}
	queue, err := p.queueNotices(ctx)
	if err != nil {
		return nil, err
	}
	// One notice per instance and kind; the queue's wins (it came first
	// and carries the instance type).
	seen := map[noticeKey]bool{}
	out := queue
	for _, n := range queue {
		seen[noticeKey{n.ProviderID, n.Kind}] = true
	}
	for _, n := range status {
		if !seen[noticeKey{n.ProviderID, n.Kind}] {
			out = append(out, n)
		}
	}
	slices.SortFunc(out, func(a, b cloudprovider.InterruptionNotice) int {
		return cmp.Or(cmp.Compare(a.ProviderID, b.ProviderID), cmp.Compare(a.Kind, b.Kind))
	})
	return out, nil
}

// Acknowledge implements cloudprovider.InterruptionAcknowledger: the
// queue's notices acted on for good are dropped, so a rebalance
// recommendation is not held (and its instance described) for the
// instance's whole life, and the messages that carried them are deleted
// from the queue only now, as the reference deletes a message once
// handled: until then a restart reads them again. Status notices stay
// while the checks report them.
func (p *Provider) Acknowledge(ctx context.Context, notices []cloudprovider.InterruptionNotice) error {
	p.intr.mu.Lock()
	var done []string
	for _, n := range notices {
		if id, err := parseProviderID(n.ProviderID); err == nil {
			done = append(done, p.intr.dropLocked(noticeKey{id, n.Kind})...)
		}
	}
	url := p.intr.queueURL
	p.intr.mu.Unlock()
	return p.deleteMessages(ctx, url, done)
}

// deleteMessages deletes the messages of receipts from the queue at url.
// One not deleted comes back after its visibility timeout and is
// deleted then.
func (p *Provider) deleteMessages(ctx context.Context, url string, receipts []string) error {
	var errs []error
	for _, r := range receipts {
		if _, err := p.opts.SQS.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: awssdk.String(url), ReceiptHandle: awssdk.String(r)}); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("deleting interruption messages, %w", err)
	}
	return nil
}

// queueNotices reads the queue, then resolves its outstanding notices'
// instances: those gone are dropped, the rest get their provider id,
// type and zone.
func (p *Provider) queueNotices(ctx context.Context) ([]cloudprovider.InterruptionNotice, error) {
	if p.opts.SQS == nil || p.opts.InterruptionQueue == "" {
		return nil, nil
	}
	if err := p.receive(ctx); err != nil {
		return nil, err
	}
	// The instances are copied out, described unlocked and the result
	// merged back, so Acknowledge and receive never wait on EC2.
	p.intr.mu.Lock()
	ids := map[string]bool{}
	for k := range p.intr.notices {
		ids[k.instance] = true
	}
	p.intr.mu.Unlock()
	if len(ids) == 0 {
		return nil, nil
	}
	live, err := p.liveByID(ctx, slices.Sorted(maps.Keys(ids)))
	if err != nil {
		return nil, err
	}
	var out []cloudprovider.InterruptionNotice
	var gone, reclaimed []string
	p.intr.mu.Lock()
	for k, q := range p.intr.notices {
		if !ids[k.instance] {
			continue // received while describing: the next poll resolves it
		}
		inst, ok := live[k.instance]
		if !ok {
			gone = append(gone, p.intr.dropLocked(k)...)
			continue
		}
		zone := awssdk.ToString(inst.Placement.AvailabilityZone)
		q.notice.ProviderID, q.notice.Zone, q.notice.InstanceType = providerID(zone, k.instance), zone, string(inst.InstanceType)
		if k.kind == cloudprovider.CapacityReservationInterruption && !q.marked {
			reclaimed = append(reclaimed, awssdk.ToString(inst.CapacityReservationId))
			q.marked = true
		}
		out = append(out, q.notice)
	}
	url := p.intr.queueURL
	p.intr.mu.Unlock()
	// The owner reclaims the reservation: offer it no more until it is
	// next described, as the reference's capacityreservation provider's
	// MarkUnavailable.
	for _, id := range reclaimed {
		p.reservationReclaimed(ctx, id)
	}
	// A notice whose instance is gone needs nothing more: its messages
	// are deleted, as the reference deletes one for an unknown instance.
	if err := p.deleteMessages(ctx, url, gone); err != nil {
		log.FromContext(ctx).Error(err, "deleting the messages of interrupted instances gone")
	}
	return out, nil
}

// reservationReclaimed takes reservation id's free slots to none until
// the next Refresh describes it.
func (p *Provider) reservationReclaimed(ctx context.Context, id string) {
	if id == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.catalog == nil {
		return
	}
	if r := p.catalog.reserved[id]; r != nil {
		r.available = 0
		log.FromContext(ctx).Info("capacity reservation reclaimed by its owner, offering it no more until described again", "capacityReservationID", id)
	}
}

// interruptionWait is one receive's wait in whole seconds (SQS's unit).
func (p *Provider) interruptionWait() int32 {
	switch w := p.opts.InterruptionWait; {
	case w == 0:
		return int32(DefaultInterruptionWait / time.Second)
	case w < 0:
		return 0
	default:
		return int32(min(w, DefaultInterruptionWait) / time.Second)
	}
}

// receive reads the queue's messages into the notices, draining it
// until a receive returns none (at most maxReceives receives, and no
// longer than ctx): a standard queue keeps no order, so a warning may
// come in any batch. A message is kept (not deleted) while a notice it
// carried is outstanding, and is deleted at once when not understood.
// The first receive long-polls; the rest take what is already there.
func (p *Provider) receive(ctx context.Context) error {
	url, err := p.queueURL(ctx)
	if err != nil {
		return err
	}
	wait := p.interruptionWait()
	for range maxReceives {
		out, err := p.opts.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: awssdk.String(url),
			MaxNumberOfMessages: receiveBatch, VisibilityTimeout: visibilityTimeout, WaitTimeSeconds: wait})
		if err != nil {
			return fmt.Errorf("receiving interruption messages, %w", err)
		}
		if len(out.Messages) == 0 {
			return nil
		}
		wait = 0
		var unknown []string
		p.intr.mu.Lock()
		for _, m := range out.Messages {
			ids, n, ok := parseEvent(awssdk.ToString(m.Body))
			if !ok {
				log.FromContext(ctx).V(1).Info("ignoring an interruption message", "messageID", awssdk.ToString(m.MessageId))
				unknown = append(unknown, awssdk.ToString(m.ReceiptHandle))
				continue
			}
			if r := p.intr.addLocked(awssdk.ToString(m.MessageId), awssdk.ToString(m.ReceiptHandle), ids, n); r != "" {
				unknown = append(unknown, r)
			}
		}
		p.intr.mu.Unlock()
		if err := p.deleteMessages(ctx, url, unknown); err != nil {
			return err
		}
	}
	return nil
}

func (p *Provider) queueURL(ctx context.Context) (string, error) {
	p.intr.mu.Lock()
	url := p.intr.queueURL
	p.intr.mu.Unlock()
	if url != "" {
		return url, nil
	}
	out, err := p.opts.SQS.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: awssdk.String(p.opts.InterruptionQueue)})
	if err != nil {
		return "", fmt.Errorf("finding interruption queue %s, %w", p.opts.InterruptionQueue, err)
	}
	p.intr.mu.Lock()
	defer p.intr.mu.Unlock()
	p.intr.queueURL = awssdk.ToString(out.QueueUrl)
	return p.intr.queueURL, nil
}

// liveByID are the live instances among ids, described describeBatch
// ids at a time (a filter, not ids, so an unknown id is no error).
func (p *Provider) liveByID(ctx context.Context, ids []string) (map[string]ec2types.Instance, error) {
	out := map[string]ec2types.Instance{}
	for batch := range slices.Chunk(ids, describeBatch) {
		pages := ec2.NewDescribeInstancesPaginator(p.ec2, &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{{Name: awssdk.String("instance-id"), Values: batch}}})
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				return nil, fmt.Errorf("describing interrupted instances, %w", err)
			}
			for _, r := range page.Reservations {
				for _, inst := range r.Instances {
					if live(inst) {
						out[awssdk.ToString(inst.InstanceId)] = inst
					}
				}
			}
		}
	}
	return out, nil
}
