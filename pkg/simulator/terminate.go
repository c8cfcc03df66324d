package simulator

import (
	"context"
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/drain"
	"github.com/capstan-dev/capstan/pkg/effects"
)

// deleteClaim deletes a NodeClaim gracefully, as the API server does with
// the termination finalizer on: it is marked deleted, and terminate
// drains its node before the instance goes.
func (s *Simulator) deleteClaim(nc *v1.NodeClaim, now time.Time) {
	if nc.DeletionTimestamp != nil {
		return
	}
	at := metav1.NewTime(now)
	nc.DeletionTimestamp = &at
	s.world.changed()
}

// terminate is the termination controller: for each deleted NodeClaim
// the same step (drain.Drain, then drain.Finish once the instance may
// go), applied to the world. Evicted pods go at once: their own grace
// periods are not simulated.
func (s *Simulator) terminate(ctx context.Context) (bool, error) {
	now := s.clock.Now()
	version, claims := s.world.version, len(s.world.claims)
	for _, nc := range s.world.sortedClaims() {
		if nc.DeletionTimestamp == nil {
			continue
		}
		in := drain.Termination{NodeClaim: nc, Node: s.world.nodeOf(nc), Progress: s.terminations[nc.Name], Now: now}
		if in.Node != nil {
			in.Pods = s.world.podsOn(in.Node.Name)
		}
		step := drain.Drain(in)
		s.terminations[nc.Name] = step.Progress
		if err := s.applyEffects(ctx, step.Effects); err != nil && !errors.As(err, new(*effects.RefusedEvictions)) {
			return false, err
		}
		if !step.Drained {
			continue
		}
		// The simulated cloud terminates at once: ask again right after
		// the instance was told to go, so the node goes with it (a node
		// left behind would look stopped).
		for range 2 {
			gone, err := cloudprovider.InstanceGone(ctx, s.cloud, nc)
			if err != nil {
				return false, err
			}
			finish := drain.Finish(nc, in.Node, gone)
			if err := s.applyEffects(ctx, finish.Effects); err != nil {
				return false, err
			}
			if finish.Done {
				delete(s.terminations, nc.Name)
				break
			}
		}
	}
	for name := range s.terminations {
		if s.world.claims[name] == nil {
			delete(s.terminations, name)
		}
	}
	return s.world.version != version || len(s.world.claims) != claims, nil
}

// deletionReason names why a NodeClaim was deleted: the disruption
// reason recorded on it (Empty, Drifted, …), else its instance's last
// notice, else the reason the deleting step gave (RegistrationTimeout,
// InstanceTerminated), else a plain deletion.
func (s *Simulator) deletionReason(nc *v1.NodeClaim) string {
	if c := meta.FindStatusCondition(nc.Status.Conditions, v1.ConditionTypeDisruptionReason); c != nil {
		return c.Reason
	}
	reason := s.rec.deletions[nc.Name]
	delete(s.rec.deletions, nc.Name)
	if reason == "" {
		reason = "Deleted"
	}
	return s.rec.endReason(nc.Status.ProviderID, reason)
}
