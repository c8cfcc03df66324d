package ec2endpoint

import (
	"crypto/md5" //nolint:gosec // SQS's body digest is MD5 by protocol, not for security.
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
)

// The interruption queue: SQS on the endpoint's listener, one queue
// (Options.InterruptionQueue) that carries the simulated cloud's
// interruption notices as EventBridge delivers EC2's to a Karpenter-style
// provider. Each notice becomes one message the first time a receive
// sees it; a received message comes back after its visibility timeout
// (on the endpoint's clock) until it is deleted, and a deleted one never
// comes back.

// queue is the interruption queue's messages.
type queue struct {
	mu       sync.Mutex
	messages []*message
	// noticed are the notices already queued, by notice key, so that a
	// notice the cloud keeps reporting is queued once.
	noticed map[string]bool
	// arrived is closed when a message is queued (sent).
	arrived chan struct{}
	// order picks which visible messages a receive returns: a standard
	// queue keeps no order ("Amazon SQS standard queues ... best-effort
	// ordering", Amazon SQS Developer Guide, "Amazon SQS standard
	// queues"). Seeded, so a run is repeatable.
	order *rand.Rand
}

type message struct {
	id, body, receipt        string
	sent, firstReceive, seen time.Time
	receives                 int
	deleted                  bool
}

// queueURL is the queue's URL as the request reached the endpoint.
func (s *Server) queueURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return fmt.Sprintf("%s://%s/%s/%s", scheme, r.Host, s.opts.AccountID, s.opts.InterruptionQueue)
}

func noSuchQueue() error {
	return &jsonError{Type: "com.amazonaws.sqs#QueueDoesNotExist", Message: "The specified queue does not exist.",
		QueryCode: "AWS.SimpleQueueService.NonExistentQueue;Sender", Status: http.StatusBadRequest}
}

// checkQueue requires the URL of the interruption queue, whatever host
// it names.
func (s *Server) checkQueue(url string) error {
	if path.Base(url) != s.opts.InterruptionQueue || path.Base(path.Dir(url)) != s.opts.AccountID {
		return noSuchQueue()
	}
	return nil
}

func (s *Server) getQueueURL(r *http.Request, body []byte) (any, error) {
	var in struct{ QueueName string }
	if err := decodeJSON(body, &in); err != nil {
		return nil, err
	}
	if in.QueueName != s.opts.InterruptionQueue {
		return nil, noSuchQueue()
	}
	return map[string]string{"QueueUrl": s.queueURL(r)}, nil
}

// receiveMessage long-polls: with WaitTimeSeconds it waits, in wall time
// as SQS does, for a message to become visible.
func (s *Server) receiveMessage(r *http.Request, body []byte) (any, error) {
	var in struct {
		QueueURL                                    string `json:"QueueUrl"`
		MaxNumberOfMessages, WaitTimeSeconds        *int
		VisibilityTimeout                           *int
		AttributeNames, MessageSystemAttributeNames []string
	}
	if err := decodeJSON(body, &in); err != nil {
		return nil, err
	}
	if err := s.checkQueue(in.QueueURL); err != nil {
		return nil, err
	}
	limit, wait, visibility := intOr(in.MaxNumberOfMessages, 1), intOr(in.WaitTimeSeconds, 0), intOr(in.VisibilityTimeout, 30)
	switch {
	case limit < 1 || limit > 10:
		return nil, invalidParameter("Value %d for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided.", limit)
	case wait < 0 || wait > 20:
		return nil, invalidParameter("Value %d for parameter WaitTimeSeconds is invalid. Reason: Must be >= 0 and <= 20, if provided.", wait)
	case visibility < 0 || visibility > 12*3600:
		return nil, invalidParameter("Value %d for parameter VisibilityTimeout is invalid. Reason: Must be >= 0 and <= 43200, if provided.", visibility)
	}
	attrs := slices.Concat(in.AttributeNames, in.MessageSystemAttributeNames)
	until := time.Now().Add(time.Duration(wait) * time.Second)
	for {
		if err := s.queueNotices(r); err != nil {
			return nil, err
		}
		out := s.receive(limit, time.Duration(visibility)*time.Second, attrs)
		if len(out) > 0 || !time.Now().Before(until) {
			return map[string]any{"Messages": out}, nil
		}
		// A sent message wakes the wait at once; the cloud's notices (on
		// its clock) are looked at again every second.
		select {
		case <-r.Context().Done():
			return map[string]any{"Messages": out}, nil
		case <-s.queue.sent():
		case <-time.After(min(time.Second, time.Until(until))):
		}
	}
}

// sent is closed when the next message is queued.
func (q *queue) sent() <-chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.arrived == nil {
		q.arrived = make(chan struct{})
	}
	return q.arrived
}

// queuedLocked wakes the receives waiting for a message; q.mu held.
func (q *queue) queuedLocked() {
	if q.arrived != nil {
		close(q.arrived)
		q.arrived = nil
	}
}

func intOr(v *int, otherwise int) int {
	if v == nil {
		return otherwise
	}
	return *v
}

func invalidParameter(format string, args ...any) error {
	return &jsonError{Type: "com.amazonaws.sqs#InvalidParameterValue", Message: fmt.Sprintf(format, args...), QueryCode: "InvalidParameterValue;Sender", Status: http.StatusBadRequest}
}

// queueNotices queues the notices the cloud reports that are not queued
// yet. Scheduled changes seen together with the same deadline and text
// become one AWS Health event naming every instance in
// affectedEntities, as AWS Health reports one event for all the
// resources it affects (AWS Health User Guide, "AWS Health events
// Amazon EventBridge schema").
func (s *Server) queueNotices(r *http.Request) error {
	notices, err := s.cloud.Interruptions(r.Context())
	if err != nil {
		return fmt.Errorf("reading interruptions, %w", err)
	}
	now := s.opts.Clock.Now()
	s.queue.mu.Lock()
	defer s.queue.mu.Unlock()
	type group struct {
		first cloudprovider.InterruptionNotice
		keys  []string
		ids   []string
	}
	var order []string
	groups := map[string]*group{}
	for _, n := range notices {
		key := n.ProviderID + "|" + string(n.Kind) + "|" + n.Deadline.String()
		if s.queue.noticed[key] {
			continue
		}
		g := key
		if n.Kind == cloudprovider.ScheduledChange {
			g = string(n.Kind) + "|" + n.Deadline.String() + "|" + n.Message
		}
		if groups[g] == nil {
			groups[g] = &group{first: n}
			order = append(order, g)
		}
		groups[g].keys = append(groups[g].keys, key)
		groups[g].ids = append(groups[g].ids, path.Base(n.ProviderID))
	}
	for _, k := range order {
		g := groups[k]
		event, ok := s.event(g.first, g.ids, now)
		if !ok {
			continue
		}
		for _, key := range g.keys {
			s.queue.noticed[key] = true
		}
		s.queue.messages = append(s.queue.messages, &message{id: newRequestID(), body: string(event), sent: now})
		s.queue.queuedLocked()
	}
	return nil
}

// QueueReservationInterruption sends the warning EC2 gives 2 minutes
// before the owner of an interruptible capacity reservation reclaims
// instance id (AWS, "Monitor interruptible Capacity Reservations with
// EventBridge and CloudTrail"): it must be running in an interruptible
// reservation. The endpoint only warns; the instance runs on until
// terminated.
func (s *Server) QueueReservationInterruption(id string) error {
	snap := s.cloud.Snapshot()
	inst := snap.Instances[id]
	if inst == nil || inst.State != sim.InstanceRunning {
		return fmt.Errorf("no running instance %s", id)
	}
	if r := snap.Reservations[inst.ReservationID]; r == nil || !r.Interruptible {
		return fmt.Errorf("instance %s is not in an interruptible capacity reservation", id)
	}
	now := s.opts.Clock.Now()
	n := cloudprovider.InterruptionNotice{Kind: cloudprovider.CapacityReservationInterruption, ProviderID: "aws:///" + inst.Zone + "/" + id, Zone: inst.Zone,
		Deadline: now.Add(2 * time.Minute)}
	body, ok := s.event(n, []string{id}, now)
	if !ok {
		return fmt.Errorf("no event for %s", n.Kind)
	}
	s.queue.mu.Lock()
	defer s.queue.mu.Unlock()
	s.queue.messages = append(s.queue.messages, &message{id: newRequestID(), body: string(body), sent: now})
	s.queue.queuedLocked()
	return nil
}

// receive hands out up to limit visible messages, hiding them for
// visibility, in no particular order as a standard queue.
func (s *Server) receive(limit int, visibility time.Duration, attrs []string) []map[string]any {
	now := s.opts.Clock.Now()
	s.queue.mu.Lock()
	defer s.queue.mu.Unlock()
	var visible []*message
	for _, m := range s.queue.messages {
		if !m.deleted && !m.seen.After(now) {
			visible = append(visible, m)
		}
	}
	if s.queue.order == nil {
		s.queue.order = rand.New(rand.NewPCG(1, 2)) //nolint:gosec // an order, not a secret.
	}
	s.queue.order.Shuffle(len(visible), func(i, j int) { visible[i], visible[j] = visible[j], visible[i] })
	out := []map[string]any{}
	for _, m := range visible[:min(limit, len(visible))] {
		m.receives++
		if m.firstReceive.IsZero() {
			m.firstReceive = now
		}
		m.receipt, m.seen = newRequestID()+"#"+m.id, now.Add(visibility)
		item := map[string]any{"MessageId": m.id, "ReceiptHandle": m.receipt, "MD5OfBody": digest(m.body), "Body": m.body}
		if a := messageAttributes(m, attrs, s.opts.AccountID); len(a) > 0 {
			item["Attributes"] = a
		}
		out = append(out, item)
	}
	return out
}

// messageAttributes are the system attributes asked for ("All" for all).
func messageAttributes(m *message, asked []string, sender string) map[string]string {
	all := map[string]string{
		"SentTimestamp":                    strconv.FormatInt(m.sent.UnixMilli(), 10),
		"ApproximateReceiveCount":          strconv.Itoa(m.receives),
		"ApproximateFirstReceiveTimestamp": strconv.FormatInt(m.firstReceive.UnixMilli(), 10),
		"SenderId":                         sender,
	}
	out := map[string]string{}
	for k, v := range all {
		if slices.Contains(asked, "All") || slices.Contains(asked, k) {
			out[k] = v
		}
	}
	return out
}

func digest(body string) string {
	sum := md5.Sum([]byte(body)) //nolint:gosec // SQS's body digest is MD5 by protocol.
	return hex.EncodeToString(sum[:])
}

func (s *Server) deleteMessage(_ *http.Request, body []byte) (any, error) {
	var in struct {
		QueueURL      string `json:"QueueUrl"`
		ReceiptHandle string
	}
	if err := decodeJSON(body, &in); err != nil {
		return nil, err
	}
	if err := s.checkQueue(in.QueueURL); err != nil {
		return nil, err
	}
	s.queue.mu.Lock()
	defer s.queue.mu.Unlock()
	for _, m := range s.queue.messages {
		if m.receipt != "" && m.receipt == in.ReceiptHandle {
			m.deleted = true
			return map[string]any{}, nil
		}
	}
	return nil, &jsonError{Type: "com.amazonaws.sqs#ReceiptHandleIsInvalid", Message: fmt.Sprintf("The input receipt handle %q is not a valid receipt handle.", in.ReceiptHandle),
		QueryCode: "ReceiptHandleIsInvalid;Sender", Status: http.StatusBadRequest}
}

// sendMessage queues any message, so a test can deliver an event of its
// own making.
func (s *Server) sendMessage(_ *http.Request, body []byte) (any, error) {
	var in struct {
		QueueURL    string `json:"QueueUrl"`
		MessageBody string
	}
	if err := decodeJSON(body, &in); err != nil {
		return nil, err
	}
	if err := s.checkQueue(in.QueueURL); err != nil {
		return nil, err
	}
	if in.MessageBody == "" {
		return nil, &jsonError{Type: "com.amazonaws.sqs#MissingParameter", Message: "The request must contain the parameter MessageBody.", QueryCode: "MissingParameter;Sender", Status: http.StatusBadRequest}
	}
	m := &message{id: newRequestID(), body: in.MessageBody, sent: s.opts.Clock.Now()}
	s.queue.mu.Lock()
	s.queue.messages = append(s.queue.messages, m)
	s.queue.queuedLocked()
	s.queue.mu.Unlock()
	return map[string]string{"MessageId": m.id, "MD5OfMessageBody": digest(m.body)}, nil
}

// eventBridge is an EventBridge event as a rule delivers it to SQS.
type eventBridge struct {
	Version    string         `json:"version"`
	ID         string         `json:"id"`
	DetailType string         `json:"detail-type"`
	Source     string         `json:"source"`
	Account    string         `json:"account"`
	Time       string         `json:"time"`
	Region     string         `json:"region"`
	Resources  []string       `json:"resources"`
	Detail     map[string]any `json:"detail"`
}

// event is the EventBridge event EC2 sends for a notice about the
// instances ids (one but for a scheduled change): a spot interruption
// warning (also when the spot price rose above the max price: that is
// how EC2 interrupts for price), a rebalance recommendation, an AWS
// Health scheduled change, an instance state-change notification
// (stopping, shutting-down), or a capacity reservation interruption
// warning. Kinds of other clouds' styles have none.
func (s *Server) event(n cloudprovider.InterruptionNotice, ids []string, now time.Time) ([]byte, bool) {
	id := ids[0]
	e := eventBridge{
		Version: "0", ID: newRequestID(), Source: "aws.ec2", Account: s.opts.AccountID, Time: now.UTC().Format(time.RFC3339),
		Region:    s.profile.Spec.Region,
		Resources: []string{fmt.Sprintf("arn:aws:ec2:%s:%s:instance/%s", s.profile.Spec.Region, s.opts.AccountID, id)},
	}
	switch n.Kind {
	case cloudprovider.SpotInterruption, cloudprovider.SpotPriceAboveMax:
		e.DetailType, e.Detail = "EC2 Spot Instance Interruption Warning", map[string]any{"instance-id": id, "instance-action": "terminate"}
	case cloudprovider.RebalanceRecommendation:
		e.DetailType, e.Detail = "EC2 Instance Rebalance Recommendation", map[string]any{"instance-id": id}
	case cloudprovider.ScheduledChange:
		entities := make([]map[string]string, 0, len(ids))
		e.Resources = nil
		for _, id := range ids {
			entities = append(entities, map[string]string{"entityValue": id})
			e.Resources = append(e.Resources, id)
		}
		e.Source, e.DetailType = "aws.health", "AWS Health Event"
		e.Detail = map[string]any{
			"eventArn":          fmt.Sprintf("arn:aws:health:%s::event/EC2/AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED/%s", s.profile.Spec.Region, e.ID),
			"service":           "EC2",
			"eventTypeCode":     "AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED",
			"eventTypeCategory": "scheduledChange",
			"startTime":         n.Deadline.UTC().Format(time.RFC1123),
			"eventDescription":  []map[string]string{{"language": "en_US", "latestDescription": n.Message}},
			"affectedEntities":  entities,
		}
	case cloudprovider.InstanceStopping, cloudprovider.InstanceTerminating:
		state := map[cloudprovider.InterruptionKind]string{cloudprovider.InstanceStopping: "stopping", cloudprovider.InstanceTerminating: "shutting-down"}[n.Kind]
		e.DetailType, e.Detail = "EC2 Instance State-change Notification", map[string]any{"instance-id": id, "state": state}
	case cloudprovider.CapacityReservationInterruption:
		e.DetailType = "EC2 Capacity Reservation Instance Interruption Warning"
		e.Detail = map[string]any{"instance-id": id, "instance-action": "terminate", "instance-termination-time": n.Deadline.UTC().Format(time.RFC3339),
			"azId": s.zoneID(n.Zone)}
	default:
		return nil, false
	}
	body, err := json.Marshal(e)
	if err != nil {
		return nil, false
	}
	return body, true
}

// queueNameOK reports whether name is a valid SQS queue name.
func queueNameOK(name string) bool {
	return name != "" && len(name) <= 80 && strings.Trim(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") == ""
}
