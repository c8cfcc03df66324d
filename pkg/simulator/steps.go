package simulator

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/effects"
	"github.com/capstan-dev/capstan/pkg/gang"
	"github.com/capstan-dev/capstan/pkg/lifecycle"
	"github.com/capstan-dev/capstan/pkg/overlay"
	"github.com/capstan-dev/capstan/pkg/scaleup"
	"github.com/capstan-dev/capstan/pkg/state"
)

// scale applies the profile's Scale events that are due.
func (s *Simulator) scale() bool {
	events := s.scaleEvents
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

// collect is garbage collection (the controller's own Collect, applied
// as the controller applies it): a leaked instance is terminated, a
// NodeClaim whose instance the cloud no longer lists is deleted and
// drained. Then the world's stand-in for kube-controller-manager: a node
// whose instance stopped turns NotReady and its pods are evicted after
// the not-ready toleration.
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
	var nodes []corev1.Node
	for _, n := range s.world.sortedNodes() {
		nodes = append(nodes, *n)
	}
	effs := lifecycle.Collected(lifecycle.Collect(instances, claims, now, 0), nodes)
	if err := s.applyEffects(ctx, effs); err != nil {
		return false, err
	}
	changed := len(effs) > 0
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
	s.attempts.Forget(nc.Name)
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
// registering and initializing its NodeClaim, or deleting it when no node
// registered in time. The agents that remove startup taints are taken to
// finish at once.
func (s *Simulator) register(ctx context.Context) (bool, error) {
	now := s.clock.Now()
	changed := false
	for _, node := range s.kubelet.Due(now) {
		setReady(node, corev1.ConditionTrue, now)
		s.world.setNode(node)
		changed = true
	}
	for _, nc := range s.world.sortedClaims() {
		if nc.DeletionTimestamp != nil {
			continue
		}
		node := s.world.nodeOf(nc)
		action, effs := lifecycle.Step(nc, node, now, s.timeouts(), s.attempts.Get(nc.Name))
		switch action {
		case lifecycle.Register, lifecycle.Initialize, lifecycle.Expire:
		default:
			continue
		}
		if err := s.applyEffects(ctx, effs); err != nil {
			return false, err
		}
		if action == lifecycle.Register {
			node.Spec.Taints = withoutStartupTaints(node.Spec.Taints, nc.Spec.StartupTaints)
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
	d := scaleup.Decide(snapshot, scaleup.Options{
		MaxInstanceTypes: s.opts.MaxInstanceTypes, MinValuesPolicy: s.opts.MinValuesPolicy, PreferencePolicy: s.opts.PreferencePolicy,
		Unavailable: s.unavailable, Models: s.world.openModels(snapshot.Input.Pods), Nominations: &s.nominations,
	}, s.claimName)
	if err := s.applyEffects(ctx, d.Effects()); err != nil {
		return false, err
	}
	s.batch.Solved(d, s.opts.Window, now)
	return len(d.NodeClaims) > 0, nil
}

func (s *Simulator) snapshot(ctx context.Context) (state.Snapshot, error) {
	return s.snapshotOf(ctx, s.world.objects())
}

// snapshotOf builds the snapshot of objs with the instance types the
// cloud offers each NodePool now and the NodeOverlays applied, as the
// controller's cluster state does (overlay.InstanceTypes).
func (s *Simulator) snapshotOf(ctx context.Context, objs state.Objects) (state.Snapshot, error) {
	res, unusable, err := overlay.InstanceTypes(ctx, s.cloud, objs.NodePools, objs.NodeOverlays)
	if err != nil {
		return state.Snapshot{}, err
	}
	s.launchPrices.Set(res.InstanceTypes)
	return state.BuildWith(objs, res.InstanceTypes, unusable, s.opts.SchedulerNames), nil
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

// launch is the lifecycle's Launch step, applied as the controller
// applies it: the cloud's Create, and on failure what the lifecycle
// decides (insufficient capacity marks the offerings and re-plans the
// pods at once; a refusal sets Launched=False and is retried after the
// backoff; a NodeClaim not launched within the launch timeout is deleted
// and its pods re-planned).
func (s *Simulator) launch(ctx context.Context) (bool, error) {
	now := s.clock.Now()
	changed := false
	for _, nc := range s.world.sortedClaims() {
		if nc.DeletionTimestamp != nil {
			continue
		}
		action, effs := lifecycle.Step(nc, nil, now, s.timeouts(), s.attempts.Get(nc.Name))
		if action != lifecycle.Launch && action != lifecycle.LaunchTimeout {
			continue
		}
		if err := s.applyEffects(ctx, effs); err != nil {
			return false, err
		}
		changed = true
	}
	var err error
	s.rec.priced(func() map[string]float64 {
		var prices map[string]float64
		prices, err = s.prices(ctx)
		return prices
	})
	return changed, err
}

// cloudPrices are the prices of the offerings instances launched into, by
// provider id, as the cloud's inventory records them.
func (s *Simulator) cloudPrices() map[string]float64 {
	instances := s.cloud.Snapshot().Instances
	out := make(map[string]float64, len(instances))
	for _, inst := range instances {
		out[inst.ProviderID()] = inst.Price
	}
	return out
}

// prices are cloudPrices, or as the
// NodeOverlays adjust them: the price the controller's cost metrics
// report (docs/overlay.md).
func (s *Simulator) prices(ctx context.Context) (map[string]float64, error) {
	out := s.cloudPrices()
	if len(s.world.overlays) == 0 {
		return out, nil
	}
	res, _, err := overlay.InstanceTypes(ctx, s.cloud, s.world.nodePools, s.world.overlays)
	if err != nil {
		return nil, err
	}
	for _, nc := range s.world.sortedClaims() {
		if _, launched := out[nc.Status.ProviderID]; !launched {
			continue
		}
		if p, ok := cloudprovider.LaunchedPrice(nc, res.InstanceTypes[nc.Labels[v1.NodePoolLabelKey]]); ok {
			out[nc.Status.ProviderID] = p
		}
	}
	return out, nil
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
			if action, wait := lifecycle.Next(nc, nil, now, s.timeouts(), s.attempts.Get(nc.Name)); action == lifecycle.Wait && wait > 0 {
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

// release is the gang release controller's step (lifecycle.ReleaseGroups)
// applied to the world: right after launches, as the controller reacts
// to a launch failing before the launch's other nodes take pods.
func (s *Simulator) release(ctx context.Context) (bool, error) {
	var claims []*v1.NodeClaim
	var pods []*corev1.Pod
	for _, nc := range s.world.sortedClaims() {
		if nc.Annotations[gang.AtomicGroupLaunchAnnotationKey] == "" {
			continue
		}
		claims = append(claims, nc)
		if nc.Status.NodeName != "" {
			pods = append(pods, s.world.podsOn(nc.Status.NodeName)...)
		}
	}
	if len(claims) == 0 {
		return false, nil
	}
	effs := lifecycle.ReleaseGroups(claims, lifecycle.NodesRunningPods(pods), s.clock.Now(), s.opts.AtomicGroupLaunchTimeout)
	for _, e := range effs {
		if d, ok := e.(effects.DeleteNodeClaim); ok {
			if s.gangReleases == nil {
				s.gangReleases = map[string]int{}
			}
			s.gangReleases[s.world.claims[d.Name].Annotations[gang.AtomicGroupAnnotationKey]]++
		}
	}
	if err := s.applyEffects(ctx, effs); err != nil {
		return false, err
	}
	return slices.ContainsFunc(effs, func(e effects.Effect) bool {
		_, ok := e.(effects.RequeueAt)
		return !ok
	}), nil
}
