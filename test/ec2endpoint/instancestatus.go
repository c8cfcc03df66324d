package ec2endpoint

import (
	"context"
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
)

// DescribeInstanceStatus: each running instance's instance and system
// reachability checks and its scheduled events, as EC2 reports them
// (EC2 API Reference, DescribeInstanceStatus and InstanceStatus). Checks
// pass unless a test impairs them (ImpairInstance); the events are the
// simulated cloud's scheduled changes, reported as instance-retirement
// with the change's deadline as NotBefore.

// Status check names a test can impair.
const (
	InstanceCheck = "instance"
	SystemCheck   = "system"
)

// statusState is when each instance's checks started failing, by
// instance id and check.
type statusState struct {
	mu       sync.Mutex
	impaired map[string]map[string]time.Time
}

// ImpairInstance fails instance id's reachability check (InstanceCheck
// or SystemCheck) from now on the endpoint's clock, as EC2 reports a
// host or guest failure.
func (s *Server) ImpairInstance(id, check string) error {
	if check != InstanceCheck && check != SystemCheck {
		return fmt.Errorf("status check %q: want %q or %q", check, InstanceCheck, SystemCheck)
	}
	if s.cloud.Snapshot().Instances[id] == nil {
		return fmt.Errorf("no instance %s", id)
	}
	s.status.mu.Lock()
	defer s.status.mu.Unlock()
	if s.status.impaired == nil {
		s.status.impaired = map[string]map[string]time.Time{}
	}
	if s.status.impaired[id] == nil {
		s.status.impaired[id] = map[string]time.Time{}
	}
	if _, ok := s.status.impaired[id][check]; !ok {
		s.status.impaired[id][check] = s.opts.Clock.Now()
	}
	return nil
}

type describeInstanceStatusResponse struct {
	responseMeta
	Statuses  []instanceStatusXML `xml:"instanceStatusSet>item"`
	NextToken string              `xml:"nextToken,omitempty"`
}

type instanceStatusXML struct {
	InstanceID       string           `xml:"instanceId"`
	AvailabilityZone string           `xml:"availabilityZone"`
	State            stateXML         `xml:"instanceState"`
	SystemStatus     statusSummaryXML `xml:"systemStatus"`
	InstanceStatus   statusSummaryXML `xml:"instanceStatus"`
	Events           []statusEventXML `xml:"eventsSet>item"`
}

type statusSummaryXML struct {
	Status  string            `xml:"status"`
	Details []statusDetailXML `xml:"details>item"`
}

type statusDetailXML struct {
	Name          string `xml:"name"`
	Status        string `xml:"status"`
	ImpairedSince string `xml:"impairedSince,omitempty"`
}

type statusEventXML struct {
	InstanceEventID string `xml:"instanceEventId"`
	Code            string `xml:"code"`
	Description     string `xml:"description"`
	NotBefore       string `xml:"notBefore"`
}

func (s *Server) describeInstanceStatus(ctx context.Context, p params) (response, error) {
	fs, ids, snap, err := s.instanceQuery(p, []string{
		"availability-zone", "instance-state-name", "instance-state-code", "instance-status.status", "instance-status.reachability",
		"system-status.status", "system-status.reachability", "event.code",
	}, false)
	if err != nil {
		return nil, err
	}
	events, err := s.scheduledEvents(ctx)
	if err != nil {
		return nil, err
	}
	all := p.get("IncludeAllInstances") == "true"
	now := s.opts.Clock.Now()
	var out []instanceStatusXML
	for _, id := range slices.Sorted(maps.Keys(snap.Instances)) {
		inst := snap.Instances[id]
		state := s.state(inst, now)
		if len(ids) > 0 && !slices.Contains(ids, id) || state.Name != "running" && !all {
			continue
		}
		x := s.instanceStatus(inst, state, events[id])
		if !matches(fs, x.resource()) {
			continue
		}
		out = append(out, x)
	}
	items, next, err := page(p, out, pageLimits{min: 5, max: 1000})
	if err != nil {
		return nil, err
	}
	return &describeInstanceStatusResponse{Statuses: items, NextToken: next}, nil
}

// instanceStatus is one instance's checks: passed, or failed since a test
// impaired them; not-applicable when it is not running.
func (s *Server) instanceStatus(inst *sim.Instance, state stateXML, events []statusEventXML) instanceStatusXML {
	s.status.mu.Lock()
	impaired := maps.Clone(s.status.impaired[inst.ID])
	s.status.mu.Unlock()
	summary := func(check string) statusSummaryXML {
		if state.Name != "running" {
			return statusSummaryXML{Status: "not-applicable"}
		}
		if since, ok := impaired[check]; ok {
			return statusSummaryXML{Status: "impaired", Details: []statusDetailXML{{Name: "reachability", Status: "failed", ImpairedSince: timestamp(since)}}}
		}
		return statusSummaryXML{Status: "ok", Details: []statusDetailXML{{Name: "reachability", Status: "passed"}}}
	}
	return instanceStatusXML{InstanceID: inst.ID, AvailabilityZone: inst.Zone, State: state,
		SystemStatus: summary(SystemCheck), InstanceStatus: summary(InstanceCheck), Events: events}
}

func (x instanceStatusXML) resource() resource {
	codes := []string{}
	for _, e := range x.Events {
		codes = append(codes, e.Code)
	}
	reach := func(s statusSummaryXML) []string {
		if len(s.Details) == 0 {
			return nil
		}
		return []string{s.Details[0].Status}
	}
	return resource{fields: map[string][]string{
		"availability-zone": {x.AvailabilityZone}, "instance-state-name": {x.State.Name}, "instance-state-code": {strconv.Itoa(x.State.Code)},
		"instance-status.status": {x.InstanceStatus.Status}, "instance-status.reachability": reach(x.InstanceStatus),
		"system-status.status": {x.SystemStatus.Status}, "system-status.reachability": reach(x.SystemStatus), "event.code": codes,
	}}
}

// scheduledEvents are the cloud's scheduled changes by instance id.
func (s *Server) scheduledEvents(ctx context.Context) (map[string][]statusEventXML, error) {
	notices, err := s.cloud.Interruptions(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading interruptions, %w", err)
	}
	out := map[string][]statusEventXML{}
	for _, n := range notices {
		if n.Kind != cloudprovider.ScheduledChange {
			continue
		}
		id := path.Base(n.ProviderID)
		out[id] = append(out[id], statusEventXML{InstanceEventID: "instance-event-" + id[2:], Code: "instance-retirement",
			Description: "The instance is running on degraded hardware", NotBefore: timestamp(n.Deadline)})
	}
	return out, nil
}
