package aws

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
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

// maxReceives bounds one poll: at most this many batches of 10 messages.
const maxReceives = 10

// Interruptions implements cloudprovider.InterruptionSource: the
// EventBridge events the interruption queue (Options.InterruptionQueue,
// as the reference's --interruption-queue) carries for the cluster's
// instances: spot interruption warnings, rebalance recommendations, AWS
// Health scheduled changes and state changes (stopping, shutting-down).
// Messages are deleted once read; their notices are kept and returned by
// every call until the instance is gone, as the interface asks. Without
// a queue there are none.
func (p *Provider) Interruptions(ctx context.Context) ([]cloudprovider.InterruptionNotice, error) {
	if p.opts.SQS == nil || p.opts.InterruptionQueue == "" {
		return nil, nil
	}
	if err := p.receive(ctx); err != nil {
		return nil, err
	}
	p.noticesMu.Lock()
	defer p.noticesMu.Unlock()
	if len(p.notices) == 0 {
		return nil, nil
	}
	ids := map[string]bool{}
	for k := range p.notices {
		ids[k.instance] = true
	}
	live, err := p.liveByID(ctx, slices.Sorted(maps.Keys(ids)))
	if err != nil {
		return nil, err
	}
	var out []cloudprovider.InterruptionNotice
	for k, n := range p.notices {
		inst, ok := live[k.instance]
		if !ok {
			delete(p.notices, k)
			continue
		}
		zone := awssdk.ToString(inst.Placement.AvailabilityZone)
		n.ProviderID, n.Zone, n.InstanceType = providerID(zone, k.instance), zone, string(inst.InstanceType)
		out = append(out, n)
	}
	slices.SortFunc(out, func(a, b cloudprovider.InterruptionNotice) int {
		return cmp.Or(cmp.Compare(a.ProviderID, b.ProviderID), cmp.Compare(a.Kind, b.Kind))
	})
	return out, nil
}

// noticeKey is one notice per instance and kind.
type noticeKey struct {
	instance string
	kind     cloudprovider.InterruptionKind
}

// receive reads the queue's messages into p.notices and deletes them.
func (p *Provider) receive(ctx context.Context) error {
	url, err := p.queueURL(ctx)
	if err != nil {
		return err
	}
	for range maxReceives {
		out, err := p.opts.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: awssdk.String(url), MaxNumberOfMessages: 10})
		if err != nil {
			return fmt.Errorf("receiving interruption messages, %w", err)
		}
		for _, m := range out.Messages {
			id, n, ok := parseEvent(awssdk.ToString(m.Body))
			if ok {
				p.noticesMu.Lock()
				if _, seen := p.notices[noticeKey{id, n.Kind}]; !seen {
					p.notices[noticeKey{id, n.Kind}] = n
				}
				p.noticesMu.Unlock()
			} else {
				log.FromContext(ctx).V(1).Info("ignoring an interruption message", "messageID", awssdk.ToString(m.MessageId))
			}
			// Read, it is ours: a message left would come back after its
			// visibility timeout, and one not understood never will be.
			if _, err := p.opts.SQS.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: awssdk.String(url), ReceiptHandle: m.ReceiptHandle}); err != nil {
				return fmt.Errorf("deleting interruption message %s, %w", awssdk.ToString(m.MessageId), err)
			}
		}
		if len(out.Messages) < 10 {
			return nil
		}
	}
	return nil
}

func (p *Provider) queueURL(ctx context.Context) (string, error) {
	p.noticesMu.Lock()
	defer p.noticesMu.Unlock()
	if p.queueURLCache != "" {
		return p.queueURLCache, nil
	}
	out, err := p.opts.SQS.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: awssdk.String(p.opts.InterruptionQueue)})
	if err != nil {
		return "", fmt.Errorf("finding interruption queue %s, %w", p.opts.InterruptionQueue, err)
	}
	p.queueURLCache = awssdk.ToString(out.QueueUrl)
	return p.queueURLCache, nil
}

// liveByID are the live instances among ids (a filter, not ids, so an
// unknown id is no error).
func (p *Provider) liveByID(ctx context.Context, ids []string) (map[string]ec2types.Instance, error) {
	out := map[string]ec2types.Instance{}
	pages := ec2.NewDescribeInstancesPaginator(p.ec2, &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{{Name: awssdk.String("instance-id"), Values: ids}}})
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
	return out, nil
}

// event is the part of an EventBridge event Capstan reads.
type event struct {
	DetailType string `json:"detail-type"`
	Time       string `json:"time"`
	Detail     struct {
		InstanceID        string `json:"instance-id"`
		State             string `json:"state"`
		EventTypeCategory string `json:"eventTypeCategory"`
		Service           string `json:"service"`
		StartTime         string `json:"startTime"`
		AffectedEntities  []struct {
			EntityValue string `json:"entityValue"`
		} `json:"affectedEntities"`
		EventDescription []struct {
			LatestDescription string `json:"latestDescription"`
		} `json:"eventDescription"`
	} `json:"detail"`
}

// parseEvent is the instance and notice an EventBridge message announces;
// false for anything else.
func parseEvent(body string) (string, cloudprovider.InterruptionNotice, bool) {
	var e event
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		return "", cloudprovider.InterruptionNotice{}, false
	}
	at, _ := time.Parse(time.RFC3339, e.Time)
	id, n := e.Detail.InstanceID, cloudprovider.InterruptionNotice{Message: e.DetailType}
	switch e.DetailType {
	case "EC2 Spot Instance Interruption Warning":
		n.Kind, n.Deadline = cloudprovider.SpotInterruption, at.Add(SpotNotice)
	case "EC2 Instance Rebalance Recommendation":
		n.Kind = cloudprovider.RebalanceRecommendation
	case "EC2 Instance State-change Notification":
		switch e.Detail.State {
		case "stopping", "stopped":
			n.Kind, n.Deadline = cloudprovider.InstanceStopping, at
		case "shutting-down", "terminated":
			n.Kind, n.Deadline = cloudprovider.InstanceTerminating, at
		default:
			return "", n, false
		}
	case "AWS Health Event":
		if e.Detail.Service != "EC2" || e.Detail.EventTypeCategory != "scheduledChange" || len(e.Detail.AffectedEntities) == 0 {
			return "", n, false
		}
		id = e.Detail.AffectedEntities[0].EntityValue
		n.Kind = cloudprovider.ScheduledChange
		n.Deadline, _ = time.Parse(time.RFC1123, e.Detail.StartTime)
		if len(e.Detail.EventDescription) > 0 {
			n.Message = e.Detail.EventDescription[0].LatestDescription
		}
	default:
		return "", n, false
	}
	return id, n, id != ""
}
