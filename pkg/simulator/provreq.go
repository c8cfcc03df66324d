package simulator

import (
	"context"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	autoscalingv1 "k8s.io/autoscaler/cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1"

	"github.com/capstan-dev/capstan/pkg/effects"
	"github.com/capstan-dev/capstan/pkg/provreq"
	"github.com/capstan-dev/capstan/pkg/state"
)

// ProvisioningRequest is one request at the end of a run.
type ProvisioningRequest struct {
	// Status's phase is provreq's: Ignored (a class Capstan does not
	// serve), Pending, Provisioned, Booked, BookingExpired or Failed,
	// with the reason and message of the condition that says so.
	provreq.Status
	// AppliedAt is when the request appeared; ProvisionedAt when it
	// became Provisioned and ProvisionedAfter how long after it appeared;
	// RefusedAt when it Failed. Offsets from the start, like events'.
	AppliedAt        string  `json:"appliedAt"`
	ProvisionedAt    string  `json:"provisionedAt,omitempty"`
	ProvisionedAfter float64 `json:"provisionedAfterSeconds,omitempty"`
	RefusedAt        string  `json:"refusedAt,omitempty"`
	// NodeClaims are those of its atomic group at the end.
	NodeClaims []string `json:"nodeClaims,omitempty"`
}

// provisioningRequests is the provisioningrequest controller's step
// (provreq.Decide) for every request, applied to the world.
func (s *Simulator) provisioningRequests(ctx context.Context) (bool, error) {
	if len(s.world.provreqs) == 0 {
		return false, nil
	}
	now := s.clock.Now()
	for i := range s.world.provreqs {
		if pr := &s.world.provreqs[i]; pr.CreationTimestamp.IsZero() {
			pr.CreationTimestamp = metav1.NewTime(s.start)
		}
	}
	objs := s.world.objects()
	// Only a pending request is solved (provreq.Decide): the snapshot
	// is built when one is.
	var snapshot state.Snapshot
	if slices.ContainsFunc(s.world.provreqs, func(pr autoscalingv1.ProvisioningRequest) bool {
		phase, _ := provreq.PhaseOf(&pr)
		return phase == provreq.PhasePending
	}) {
		var err error
		if snapshot, err = s.snapshotOf(ctx, objs); err != nil {
			return false, err
		}
	}
	changed := false
	for _, r := range s.world.provisioningRequests(objs) {
		d := provreq.Decide(r, snapshot, provreq.Options{}, now)
		if len(d.Conditions) > 0 {
			changed = true
		}
		effs := slices.DeleteFunc(d.Effects(r.Object), func(e effects.Effect) bool {
			_, observe := e.(effects.Observe)
			return observe
		})
		if err := s.applyEffects(ctx, effs); err != nil {
			return false, err
		}
	}
	return changed, nil
}

// provisioningRequestsReport reports each request with the times its
// conditions were set.
func (s *Simulator) provisioningRequestsReport() []ProvisioningRequest {
	var out []ProvisioningRequest
	for _, r := range s.world.provisioningRequests(s.world.objects()) {
		pr := r.Object
		phase, c := provreq.PhaseOf(pr)
		rep := ProvisioningRequest{
			Status:    provreq.Status{Name: pr.Namespace + "/" + pr.Name, Class: pr.Spec.ProvisioningClassName, Phase: phase},
			AppliedAt: offset(s.start, pr.CreationTimestamp.Time),
		}
		if c != nil {
			rep.Reason, rep.Message = c.Reason, c.Message
		}
		for _, nc := range r.Claims {
			rep.NodeClaims = append(rep.NodeClaims, nc.Name)
		}
		if c := meta.FindStatusCondition(pr.Status.Conditions, autoscalingv1.Provisioned); c != nil && c.Status == metav1.ConditionTrue {
			rep.ProvisionedAt = offset(s.start, c.LastTransitionTime.Time)
			rep.ProvisionedAfter = c.LastTransitionTime.Sub(pr.CreationTimestamp.Time).Seconds()
		}
		if c := meta.FindStatusCondition(pr.Status.Conditions, autoscalingv1.Failed); c != nil && c.Status == metav1.ConditionTrue {
			rep.RefusedAt = offset(s.start, c.LastTransitionTime.Time)
		}
		out = append(out, rep)
	}
	return out
}
