package aws

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/capstan-dev/capstan/pkg/cloudprovider"
)

// EC2's instance status checks as repair signals, as the reference's
// instance status controller (pkg/controllers/interruption/
// instancestatus_controller.go, pkg/providers/instancestatus): an
// impaired instance or system check, failed for UnhealthyThreshold,
// replaces the instance at once (InstanceUnhealthy, the reference's
// ForcefulTermination); a scheduled event drains it (ScheduledChange, the
// reference's CordonAndDrain). Capstan has no node repair policies: the
// interruption seam carries both (docs/aws.md, "Interruptions").

const (
	// DefaultInstanceStatusInterval is how often the checks are polled
	// (the reference's InstanceStatusInterval).
	DefaultInstanceStatusInterval = time.Minute
	// UnhealthyThreshold is how long a check must have failed before the
	// instance is replaced (the reference's UnhealthyThreshold).
	UnhealthyThreshold = 120 * time.Second
)

// statusFilters are the reference's three DescribeInstanceStatus queries:
// filters of different names are ANDed, so impaired instance checks,
// impaired system checks and scheduled events are asked for apart. EBS
// checks are left out, as the reference does.
var statusFilters = [][]ec2types.Filter{
	{{Name: awssdk.String("instance-status.status"), Values: []string{string(ec2types.SummaryStatusImpaired)}}},
	{{Name: awssdk.String("system-status.status"), Values: []string{string(ec2types.SummaryStatusImpaired)}}},
	{{Name: awssdk.String("event.code"), Values: []string{
		string(ec2types.EventCodeInstanceReboot), string(ec2types.EventCodeSystemReboot), string(ec2types.EventCodeSystemMaintenance),
		string(ec2types.EventCodeInstanceRetirement), string(ec2types.EventCodeInstanceStop),
	}}},
}

// statusNotices are the notices of the last status poll, polling again
// once the interval has passed. Without ec2:DescribeInstanceStatus the
// checks are skipped until the next interval, as the reference does.
func (p *Provider) statusNotices(ctx context.Context) ([]cloudprovider.InterruptionNotice, error) {
	p.intr.statusMu.Lock()
	defer p.intr.statusMu.Unlock()
	interval := cmp.Or(p.opts.InstanceStatusInterval, DefaultInstanceStatusInterval)
	now := p.opts.Clock.Now()
	if !p.intr.statusAt.IsZero() && now.Before(p.intr.statusAt.Add(interval)) {
		return p.intr.status, nil
	}
	statuses, err := p.describeStatuses(ctx)
	if isCode(err, "UnauthorizedOperation") {
		log.FromContext(ctx).Error(err, "ec2:DescribeInstanceStatus is not allowed: instance status checks are not acted on")
		p.intr.status, p.intr.statusAt = nil, now
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	p.intr.status, p.intr.statusAt = unhealthyNotices(statuses, now), now
	return p.intr.status, nil
}

// describeStatuses runs the three queries, each instance once.
func (p *Provider) describeStatuses(ctx context.Context) ([]ec2types.InstanceStatus, error) {
	seen := map[string]bool{}
	var out []ec2types.InstanceStatus
	for _, fs := range statusFilters {
		pages := ec2.NewDescribeInstanceStatusPaginator(p.ec2, &ec2.DescribeInstanceStatusInput{Filters: fs})
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				return nil, fmt.Errorf("describing instance status checks, %w", err)
			}
			for _, s := range page.InstanceStatuses {
				if id := awssdk.ToString(s.InstanceId); !seen[id] {
					seen[id] = true
					out = append(out, s)
				}
			}
		}
	}
	return out, nil
}

// unhealthyNotices are the notices the status checks call for at now:
// InstanceUnhealthy for an instance or system check failed for at least
// UnhealthyThreshold (deadline: when the threshold was crossed, so the
// drain is skipped as the reference's termination timestamp does), and
// ScheduledChange for a scheduled event (deadline: its NotBefore, or now
// when it has none). The reference acts on every scheduled event listed,
// whatever its NotBefore: the host is degraded.
func unhealthyNotices(statuses []ec2types.InstanceStatus, now time.Time) []cloudprovider.InterruptionNotice {
	var out []cloudprovider.InterruptionNotice
	for _, s := range statuses {
		pid := providerID(awssdk.ToString(s.AvailabilityZone), awssdk.ToString(s.InstanceId))
		var failed []string
		var since time.Time
		for _, c := range []struct {
			name    string
			summary *ec2types.InstanceStatusSummary
		}{{"instance", s.InstanceStatus}, {"system", s.SystemStatus}} {
			if c.summary == nil {
				continue
			}
			for _, d := range c.summary.Details {
				at := awssdk.ToTime(d.ImpairedSince)
				if d.Status != ec2types.StatusTypeFailed || now.Sub(at) < UnhealthyThreshold {
					continue
				}
				failed = append(failed, fmt.Sprintf("%s status %s failed since %s", c.name, d.Name, at.UTC().Format(time.RFC3339)))
				if since.IsZero() || at.Before(since) {
					since = at
				}
			}
		}
		if len(failed) > 0 {
			out = append(out, cloudprovider.InterruptionNotice{Kind: cloudprovider.InstanceUnhealthy, ProviderID: pid, Zone: awssdk.ToString(s.AvailabilityZone),
				Deadline: since.Add(UnhealthyThreshold), Message: "EC2 status checks: " + strings.Join(failed, "; ")})
		}
		if len(s.Events) == 0 {
			continue
		}
		first := slices.MinFunc(s.Events, func(a, b ec2types.InstanceStatusEvent) int {
			return awssdk.ToTime(a.NotBefore).Compare(awssdk.ToTime(b.NotBefore))
		})
		deadline := awssdk.ToTime(first.NotBefore)
		if deadline.IsZero() {
			deadline = now
		}
		out = append(out, cloudprovider.InterruptionNotice{Kind: cloudprovider.ScheduledChange, ProviderID: pid, Zone: awssdk.ToString(s.AvailabilityZone),
			Deadline: deadline, Message: fmt.Sprintf("EC2 scheduled event %s: %s", first.Code, awssdk.ToString(first.Description))})
	}
	return out
}
