package apply

import (
	"context"
	"errors"
	"fmt"
	"time"

	autoscalingv1 "k8s.io/autoscaler/cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/effects"
	"github.com/capstan-dev/capstan/pkg/lifecycle"
)

// Deps are what the applier writes to.
type Deps struct {
	Client      client.Client
	Recorder    events.EventRecorder
	Cloud       cloudprovider.CloudProvider
	Unavailable *cloudprovider.UnavailableOfferings
	Counters    *Counters
	// Trigger asks the provisioner for a solve (effects.TriggerSolve).
	Trigger func(effects.TriggerSolve)
	// Attempts keep NodeClaims' failed launches (effects.SetLaunchAttempts);
	// the lifecycle controller reads them.
	Attempts *lifecycle.Attempts
	Clock    clock.Clock
	// AfterCreate, when set, runs between a successful cloud Create and
	// the effects that record it: the crash-injection point tests use to
	// prove a crash there leaks nothing garbage collection misses.
	AfterCreate func(nodeClaim string)
}

// Applier applies effects through the API server and the cloud.
type Applier struct{ deps Deps }

// New builds an applier; without Attempts it keeps its own, without a
// Clock it reads the wall clock.
func New(deps Deps) *Applier {
	if deps.Attempts == nil {
		deps.Attempts = lifecycle.NewAttempts()
	}
	if deps.Clock == nil {
		deps.Clock = clock.RealClock{}
	}
	return &Applier{deps: deps}
}

// Attempts are the failed launches the applier records.
func (a *Applier) Attempts() *lifecycle.Attempts { return a.deps.Attempts }

// Apply carries out effs in order and returns how long until the
// earliest effects.RequeueAt (zero: none). Objects already gone are
// skipped where a deletion may race the effect. It stops at the first
// error, except that evictions a disruption budget refuses are reported
// (*effects.RefusedEvictions) after the rest are applied.
func (a *Applier) Apply(ctx context.Context, effs []effects.Effect) (time.Duration, error) {
	run := &run{Applier: a, objs: map[effects.Ref]client.Object{}}
	if err := run.all(ctx, effs); err != nil {
		return 0, err
	}
	var requeue time.Duration
	if !run.requeue.IsZero() {
		requeue = max(run.requeue.Sub(a.deps.Clock.Now()), time.Nanosecond)
	}
	if len(run.refused) > 0 {
		return requeue, &effects.RefusedEvictions{Pods: run.refused}
	}
	return requeue, nil
}

// run is one Apply: the objects it read or wrote, newest first, so each
// patch starts from what the one before it left rather than from a cache
// that may not show it yet.
type run struct {
	*Applier
	objs    map[effects.Ref]client.Object
	requeue time.Time
	refused []string
}

func (r *run) all(ctx context.Context, effs []effects.Effect) error {
	for _, e := range effs {
		if err := r.one(ctx, e); err != nil {
			return err
		}
	}
	return nil
}

func (r *run) one(ctx context.Context, eff effects.Effect) error {
	switch e := eff.(type) {
	case effects.CreateNodeClaim:
		nc := e.NodeClaim.DeepCopy()
		if err := r.deps.Client.Create(ctx, nc); err != nil {
			return fmt.Errorf("creating nodeclaim %s, %w", nc.Name, err)
		}
		r.objs[effects.NodeClaimRef(nc.Name)] = nc
	case effects.DeleteNodeClaim:
		if e.Reason != "" {
			log.FromContext(ctx).Info("deleting nodeclaim", "nodeclaim", e.Name, "reason", e.Reason)
		}
		return r.delete(ctx, effects.NodeClaimRef(e.Name))
	case effects.DeleteNode:
		return r.delete(ctx, effects.NodeRef(e.Name))
	case effects.SetCondition:
		return r.patch(ctx, e.Object, true, func(o client.Object) error { return effects.SetConditionInto(o, e.Condition, false) })
	case effects.RemoveCondition:
		return r.patch(ctx, e.Object, true, func(o client.Object) error {
			return effects.SetConditionInto(o, metav1.Condition{Type: e.Type}, true)
		})
	case effects.MergeMetadata:
		return r.patch(ctx, e.Object, false, func(o client.Object) error { effects.MergeInto(o, e); return nil })
	case effects.RemoveLabels:
		return r.patch(ctx, e.Object, false, func(o client.Object) error { effects.RemoveLabelsFrom(o, e.Keys); return nil })
	case effects.RemoveFinalizer:
		return r.patch(ctx, e.Object, false, func(o client.Object) error { effects.RemoveFinalizerFrom(o, e.Finalizer); return nil })
	case effects.SetNodeClaimStatus:
		return r.patch(ctx, effects.NodeClaimRef(e.Name), true, func(o client.Object) error {
			effects.SetStatusInto(o.(*v1.NodeClaim), e)
			return nil
		})
	case effects.SetNodePoolStatus:
		return r.patch(ctx, effects.NodePoolRef(e.Name), true, func(o client.Object) error {
			o.(*v1.NodePool).Status = e.Status
			return nil
		})
	case effects.PatchNode:
		return r.patch(ctx, effects.NodeRef(e.Name), false, func(o client.Object) error {
			effects.PatchNodeInto(o.(*corev1.Node), e)
			return nil
		})
	case effects.Event:
		return r.event(ctx, e)
	case effects.MarkUnavailable:
		if r.deps.Unavailable != nil && e.Error != nil {
			r.deps.Unavailable.Mark(e.Error)
		}
	case effects.TriggerSolve:
		if r.deps.Trigger != nil {
			r.deps.Trigger(e)
		}
	case effects.RequeueAt:
		if !e.At.IsZero() && (r.requeue.IsZero() || e.At.Before(r.requeue)) {
			r.requeue = e.At
		}
	case effects.EvictPod:
		return r.evict(ctx, e)
	case effects.DeletePod:
		pod := &corev1.Pod{}
		pod.Namespace, pod.Name = e.Namespace, e.Name
		var opts []client.DeleteOption
		if e.GracePeriodSeconds != nil {
			opts = append(opts, client.GracePeriodSeconds(*e.GracePeriodSeconds))
		}
		if err := client.IgnoreNotFound(r.deps.Client.Delete(ctx, pod, opts...)); err != nil {
			return fmt.Errorf("deleting pod %s/%s, %w", e.Namespace, e.Name, err)
		}
	case effects.Launch:
		return r.launch(ctx, e.NodeClaim)
	case effects.Terminate:
		if err := cloudprovider.IgnoreNodeClaimNotFound(r.deps.Cloud.Delete(ctx, e.NodeClaim)); err != nil {
			return fmt.Errorf("terminating instance %s of nodeclaim %s, %w", e.NodeClaim.Status.ProviderID, e.NodeClaim.Name, err)
		}
	case effects.Metric:
		return r.deps.Counters.add(e.Name, e.Labels, e.Value)
	case effects.Observe:
		return r.deps.Counters.observe(e.Name, e.Value)
	case effects.SetLaunchAttempts:
		r.deps.Attempts.Set(e)
	default:
		return fmt.Errorf("no way to apply %T", eff)
	}
	return nil
}

// launch calls the cloud and applies what the lifecycle makes of the
// answer.
func (r *run) launch(ctx context.Context, nc *v1.NodeClaim) error {
	created, err := r.deps.Cloud.Create(ctx, nc)
	if err == nil && r.deps.AfterCreate != nil {
		r.deps.AfterCreate(nc.Name)
	}
	return r.all(ctx, lifecycle.AfterLaunch(nc, created, err, r.deps.Attempts.Get(nc.Name), r.deps.Clock.Now()))
}

// object is the object ref names as this run last saw it: read (from the
// cache) on first use. Nil when it does not exist.
func (r *run) object(ctx context.Context, ref effects.Ref) (client.Object, error) {
	if o, ok := r.objs[ref]; ok {
		return o, nil
	}
	o, err := newObject(ref)
	if err != nil {
		return nil, err
	}
	if err := r.deps.Client.Get(ctx, client.ObjectKeyFromObject(o), o); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading %s %s, %w", ref.Kind, ref.Name, err)
	}
	r.objs[ref] = o
	return o, nil
}

// patch changes the object (its status when status) by a merge patch
// from what it was; an object already gone is skipped.
func (r *run) patch(ctx context.Context, ref effects.Ref, status bool, change func(client.Object) error) error {
	o, err := r.object(ctx, ref)
	if err != nil || o == nil {
		return err
	}
	before := o.DeepCopyObject().(client.Object)
	if err := change(o); err != nil {
		return err
	}
	p := client.MergeFrom(before)
	if status {
		err = r.deps.Client.Status().Patch(ctx, o, p)
	} else {
		err = r.deps.Client.Patch(ctx, o, p)
	}
	if apierrors.IsNotFound(err) {
		delete(r.objs, ref)
		return nil
	}
	if err != nil {
		return fmt.Errorf("patching %s %s, %w", ref.Kind, ref.Name, err)
	}
	return nil
}

func (r *run) delete(ctx context.Context, ref effects.Ref) error {
	o, err := newObject(ref)
	if err != nil {
		return err
	}
	if err := client.IgnoreNotFound(r.deps.Client.Delete(ctx, o)); err != nil {
		return fmt.Errorf("deleting %s %s, %w", ref.Kind, ref.Name, err)
	}
	delete(r.objs, ref)
	return nil
}

func (r *run) evict(ctx context.Context, e effects.EvictPod) error {
	pod := &corev1.Pod{}
	pod.Namespace, pod.Name = e.Namespace, e.Name
	eviction := &policyv1.Eviction{}
	eviction.Namespace, eviction.Name = e.Namespace, e.Name
	err := r.deps.Client.SubResource("eviction").Create(ctx, pod, eviction)
	switch {
	// A namespace being deleted refuses evictions; its pods are going
	// anyway.
	case err == nil, apierrors.IsNotFound(err), apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
	case apierrors.IsTooManyRequests(err):
		r.refused = append(r.refused, e.Namespace+"/"+e.Name)
	default:
		return fmt.Errorf("evicting pod %s/%s, %w", e.Namespace, e.Name, err)
	}
	return nil
}

// event records e on its object as this run last saw it (its UID lets
// `kubectl describe` find the event), or as named when it is gone.
func (r *run) event(ctx context.Context, e effects.Event) error {
	regarding, err := r.eventObject(ctx, e.Object)
	if err != nil {
		return err
	}
	var related client.Object
	if e.Related != nil {
		if related, err = r.eventObject(ctx, *e.Related); err != nil {
			return err
		}
	}
	if related == nil {
		r.deps.Recorder.Eventf(regarding, nil, e.Type, e.Reason, e.Action, "%s", e.Message)
	} else {
		r.deps.Recorder.Eventf(regarding, related, e.Type, e.Reason, e.Action, "%s", e.Message)
	}
	return nil
}

func (r *run) eventObject(ctx context.Context, ref effects.Ref) (client.Object, error) {
	o, err := r.object(ctx, ref)
	if err != nil || o != nil {
		return o, err
	}
	return newObject(ref)
}

// newObject is an empty object of ref's kind with its name.
func newObject(ref effects.Ref) (client.Object, error) {
	var o client.Object
	switch ref.Kind {
	case effects.KindNodeClaim:
		o = &v1.NodeClaim{}
	case effects.KindNode:
		o = &corev1.Node{}
	case effects.KindPod:
		o = &corev1.Pod{}
	case effects.KindNodePool:
		o = &v1.NodePool{}
	case effects.KindProvisioningRequest:
		o = &autoscalingv1.ProvisioningRequest{}
	default:
		return nil, errors.New("no object of kind " + string(ref.Kind))
	}
	o.SetNamespace(ref.Namespace)
	o.SetName(ref.Name)
	return o, nil
}
