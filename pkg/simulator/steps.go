package simulator

import (
	"context"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/effects"
	"github.com/capstan-dev/capstan/pkg/lifecycle"
	"github.com/capstan-dev/capstan/pkg/scaleup"
	"github.com/capstan-dev/capstan/pkg/state"
)

// scale applies the profile's Scale events that are due.
func (s *Simulator) scale() bool {
	events := s.cloud.ScaleEvents()
	changed := false
	for ; s.scaled < len(events); s.scaled++ {
		e := events[s.scaled]
		if s.start.Add(e.At.Duration).After(s.clock.Now()) {
			break
		}
		for _, w := range s.world.workloads {
			if w.kind == "Deployment" && w.target() == e.Workload {
				s.rec.event(s.clock.Now(), "Scaled", "deployment/"+e.Workload, fmt.Sprintf("replicas %d → %d", w.replicas, *e.Replicas))
				w.replicas = *e.Replicas
				changed = true
			}
		}
	}
	return changed
}

// collect is garbage collection (the controller's own Collect): a
// NodeClaim whose instance the cloud no longer lists is deleted with its
// Node, and the Node's pods go back to their controllers.
func (s *Simulator) collect(ctx context.Context) (bool, error) {
	now := s.clock.Now()
	instances, err := s.cloud.List(ctx)
	if err != nil {
		return false, fmt.Errorf("listing instances, %w", err)
	}
	var claims []v1.NodeClaim
	for _, nc := range s.world.sortedClaims() {
		claims = append(claims, *nc)
	}
	changed := false
	d := lifecycle.Collect(instances, claims, now, 0)
	for _, inst := range d.Terminate {
		s.rec.event(now, "InstanceLeaked", inst.Status.ProviderID, "no NodeClaim owns the instance; terminated")
		if err := cloudprovider.IgnoreNodeClaimNotFound(s.cloud.Delete(ctx, inst)); err != nil {
			return false, fmt.Errorf("terminating leaked instance %s, %w", inst.Status.ProviderID, err)
		}
	}
	for _, nc := range d.Delete {
		s.removeClaim(s.world.claims[nc.Name], s.rec.endReason(nc.Status.ProviderID, "InstanceTerminated"))
		changed = true
	}
	for _, node := range s.world.sortedNodes() {
		if s.kubelet.Stopped(node.Name) && s.rec.stop(now, node) {
			setReady(node, corev1.ConditionFalse, now)
			node.Spec.Taints = append(node.Spec.Taints, corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoExecute})
			s.world.changed()
			changed = true
		}
		if at, ok := s.rec.evictAt(node); ok && !now.Before(at) {
			for _, p := range s.world.podsOn(node.Name) {
				if !state.IsDaemonSetPod(p) {
					s.world.deletePod(p)
					changed = true
				}
			}
		}
	}
	return changed, nil
}

// removeClaim deletes a NodeClaim, its Node and the Node's pods.
func (s *Simulator) removeClaim(nc *v1.NodeClaim, reason string) {
	now := s.clock.Now()
	if node := s.world.nodeOf(nc); node != nil {
		pods := s.world.podsOn(node.Name)
		s.rec.deleted(now, nc.Name, reason, pods)
		for _, p := range pods {
			s.world.deletePod(p)
		}
		s.world.deleteNode(node)
	} else {
		s.rec.deleted(now, nc.Name, reason, nil)
	}
	delete(s.world.claims, nc.Name)
	delete(s.attempts, nc.Name)
	s.world.changed()
}

// workloads runs the workload controllers.
func (s *Simulator) workloads(context.Context) (bool, error) {
	changed := false
	for _, w := range s.world.workloads {
		created, deleted := w.reconcile(s.world, s.rng)
		changed = changed || created+deleted > 0
	}
	return changed, nil
}

// register is the instance's kubelet joining, then the lifecycle step
// (lifecycle.Next) registering and initializing its NodeClaim. The
// agents that remove startup taints are taken to finish at once.
func (s *Simulator) register(context.Context) (bool, error) {
	now := s.clock.Now()
	changed := false
	for _, node := range s.kubelet.Due(now) {
		setReady(node, corev1.ConditionTrue, now)
		s.world.setNode(node)
		changed = true
	}
	for _, nc := range s.world.sortedClaims() {
		node := s.world.nodeOf(nc)
		action, _ := lifecycle.Next(nc, node, now, s.timeouts(), s.attempts[nc.Name])
		switch action {
		case lifecycle.Register:
			synced, _ := lifecycle.SyncNode(nc, node)
			synced.Spec.Taints = withoutStartupTaints(synced.Spec.Taints, nc.Spec.StartupTaints)
			s.world.setNode(synced)
			nc.Status.NodeName = node.Name
			setCondition(nc, v1.ConditionTypeRegistered, now)
			s.rec.registered(nc.Name, node.Name)
		case lifecycle.Initialize:
			node.Labels[v1.NodeInitializedLabelKey] = "true"
			setCondition(nc, v1.ConditionTypeInitialized, now)
		case lifecycle.Expire:
			s.rec.event(now, "RegistrationTimeout", "nodeclaim/"+nc.Name, fmt.Sprintf("no node registered within %s of launch", s.opts.RegistrationTTL))
			_ = s.cloud.Delete(context.Background(), nc)
			s.removeClaim(nc, "RegistrationTimeout")
		default:
			continue
		}
		s.world.changed()
		changed = true
	}
	return changed, nil
}

func withoutStartupTaints(taints, startup []corev1.Taint) []corev1.Taint {
	var out []corev1.Taint
	for _, t := range taints {
		keep := true
		for _, st := range startup {
			keep = keep && !st.MatchTaint(&t)
		}
		if keep {
			out = append(out, t)
		}
	}
	return out
}

func setReady(node *corev1.Node, status corev1.ConditionStatus, at time.Time) {
	now := metav1.NewTime(at)
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == corev1.NodeReady {
			node.Status.Conditions[i].Status, node.Status.Conditions[i].LastTransitionTime = status, now
			return
		}
	}
	node.Status.Conditions = append(node.Status.Conditions, corev1.NodeCondition{Type: corev1.NodeReady, Status: status, LastTransitionTime: now})
}

func setCondition(nc *v1.NodeClaim, t string, now time.Time) {
	meta.SetStatusCondition(&nc.Status.Conditions, metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: t, LastTransitionTime: metav1.NewTime(now)})
}

func setConditionFalse(nc *v1.NodeClaim, t, reason, message string, now time.Time) {
	meta.SetStatusCondition(&nc.Status.Conditions, metav1.Condition{Type: t, Status: metav1.ConditionFalse, Reason: reason, Message: message, LastTransitionTime: metav1.NewTime(now)})
}

// provision is the provisioner: the batch windows, then the same Decide
// the controller calls, applied to the world.
func (s *Simulator) provision(ctx context.Context) (bool, error) {
	now := s.clock.Now()
	if due, _ := s.batch.Due(s.opts.Window, now); !due {
		return false, nil
	}
	snapshot, err := s.snapshot(ctx)
	if err != nil {
		return false, err
	}
	d := scaleup.Decide(ctx, snapshot, scaleup.Options{
		MaxInstanceTypes: s.opts.MaxInstanceTypes, Unavailable: s.unavailable, Models: s.world.model, Nominations: &s.nominations,
	}, s.claimName)
	s.applyDecision(d.Effects(), now)
	s.batch.Solved(d, s.opts.Window, now)
	return len(d.NodeClaims) > 0, nil
}

// applyDecision carries out a provisioning decision in the world: the
// NodeClaims created (the lifecycle controller adds their finalizer),
// the reasons pods can't be provisioned for recorded.
func (s *Simulator) applyDecision(effs []effects.Effect, now time.Time) {
	for _, e := range effs {
		switch e := e.(type) {
		case effects.CreateNodeClaim:
			nc := e.NodeClaim
			nc.CreationTimestamp = metav1.NewTime(now)
			nc.Finalizers = []string{v1.TerminationFinalizer}
			s.world.claims[nc.Name] = nc
		case effects.Event:
			if e.Object.Kind == effects.KindPod && e.Type == corev1.EventTypeWarning {
				s.rec.pending(now, e.Object.Namespace+"/"+e.Object.Name, e.Reason, e.Message)
			}
		}
	}
}

func (s *Simulator) snapshot(ctx context.Context) (state.Snapshot, error) {
	return state.BuildWithCloud(ctx, s.world.objects(), s.cloud, s.opts.SchedulerNames)
}

// claimName names a NodeClaim as the controller does (pool-xxxxx), from
// the run's seeded source.
func (s *Simulator) claimName(nodePool string) string {
	for {
		name := nodePool + "-" + suffix(s.rng)
		// A deleted NodeClaim's name stays taken: the report keys its
		// node by it.
		if _, taken := s.world.claims[name]; !taken && s.rec.nodes[name] == nil {
			return name
		}
	}
}

// launch is the lifecycle's Launch step: the cloud's Create, and on
// failure what lifecycle.OnLaunchError decides, as the controller does:
// insufficient capacity marks the offerings and re-plans the pods at
// once; a refusal sets Launched=False and is retried after the backoff;
// a NodeClaim not launched within the launch timeout is deleted and its
// pods re-planned.
func (s *Simulator) launch(ctx context.Context) (bool, error) {
	now := s.clock.Now()
	// Outcomes are recorded after the loop, in order, so the cloud's
	// inventory is read once for the launches' prices, not once each.
	type outcome struct {
		nc        *v1.NodeClaim
		kind, msg string
	}
	var outcomes []outcome
	for _, nc := range s.world.sortedClaims() {
		switch action, _ := lifecycle.Next(nc, nil, now, s.timeouts(), s.attempts[nc.Name]); action {
		case lifecycle.Launch:
		case lifecycle.LaunchTimeout:
			for _, e := range s.launchFailed(nc, lifecycle.OnLaunchTimeout(nc, s.opts.LaunchTimeout), now) {
				outcomes = append(outcomes, outcome{nc: nc, kind: e.Reason, msg: e.Message})
			}
			continue
		default:
			continue
		}
		created, err := s.cloud.Create(ctx, nc)
		if err != nil {
			for _, e := range s.launchFailed(nc, lifecycle.OnLaunchError(err, s.attempts[nc.Name], now), now) {
				outcomes = append(outcomes, outcome{nc: nc, kind: e.Reason, msg: e.Message})
			}
			continue
		}
		delete(s.attempts, nc.Name)
		if nc.Labels == nil {
			nc.Labels = map[string]string{}
		}
		maps.Copy(nc.Labels, created.Labels)
		if len(created.Annotations) > 0 && nc.Annotations == nil {
			nc.Annotations = map[string]string{}
		}
		// The cloud's annotations (the sim's NodeClass hash) show what the
		// instance was launched with.
		maps.Copy(nc.Annotations, created.Annotations)
		nc.Status.ProviderID, nc.Status.ImageID = created.Status.ProviderID, created.Status.ImageID
		nc.Status.Capacity, nc.Status.Allocatable = created.Status.Capacity, created.Status.Allocatable
		setCondition(nc, v1.ConditionTypeLaunched, now)
		outcomes = append(outcomes, outcome{nc: nc})
	}
	var prices map[string]float64
	for _, o := range outcomes {
		if o.kind != "" {
			s.rec.event(now, o.kind, "nodeclaim/"+o.nc.Name, o.msg)
			continue
		}
		if prices == nil {
			prices = s.prices()
		}
		s.rec.launched(now, o.nc, prices[o.nc.Status.ProviderID])
	}
	return len(outcomes) > 0, nil
}

// launchFailed applies what the lifecycle decided after a failed or
// timed-out launch, as the controller does: the marks, then the
// NodeClaim removed (its pods planned again at once) or kept with
// Launched=False until its next attempt. It returns the events to record.
func (s *Simulator) launchFailed(nc *v1.NodeClaim, failure lifecycle.LaunchFailure, now time.Time) []lifecycle.Event {
	s.unavailable.Mark(failure.Unavailable)
	if failure.Delete {
		s.removeClaim(nc, failure.Reason)
		s.batch.Trigger(now, true)
		return failure.Events
	}
	s.attempts[nc.Name] = failure.Attempts
	setConditionFalse(nc, v1.ConditionTypeLaunched, failure.Reason, failure.Message, now)
	s.world.changed()
	return failure.Events
}

// prices are the prices of the offerings instances launched into, by
// provider id, as the cloud's inventory records them.
func (s *Simulator) prices() map[string]float64 {
	instances := s.cloud.Snapshot().Instances
	out := make(map[string]float64, len(instances))
	for _, inst := range instances {
		out[inst.ProviderID()] = inst.Price
	}
	return out
}

// lifecycleDeadlines are the registration timeouts of launched NodeClaims,
// the retries and launch timeouts of those not launched, and the eviction
// times of stopped nodes' pods.
func (s *Simulator) lifecycleDeadlines() []time.Time {
	var out []time.Time
	now := s.clock.Now()
	for _, nc := range s.world.sortedClaims() {
		c := meta.FindStatusCondition(nc.Status.Conditions, v1.ConditionTypeLaunched)
		switch {
		case c != nil && c.Status == metav1.ConditionTrue && nc.Status.NodeName == "":
			out = append(out, c.LastTransitionTime.Add(s.opts.RegistrationTTL))
		case c == nil || c.Status != metav1.ConditionTrue:
			if action, wait := lifecycle.Next(nc, nil, now, s.timeouts(), s.attempts[nc.Name]); action == lifecycle.Wait && wait > 0 {
				out = append(out, now.Add(wait))
			}
		}
	}
	for _, node := range s.world.sortedNodes() {
		if at, ok := s.rec.evictAt(node); ok {
			out = append(out, at)
		}
	}
	return out
}
