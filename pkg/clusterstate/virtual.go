package clusterstate

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1beta1 "github.com/capstan-dev/capstan/api/autoscaling/v1beta1"
	"github.com/capstan-dev/capstan/pkg/buffers"
	"github.com/capstan-dev/capstan/pkg/provreq"
	"github.com/capstan-dev/capstan/pkg/state"
)

// Sources are the kinds whose objects hold capacity with virtual pods,
// each behind its feature gate.
type Sources struct {
	// CapacityBuffers: the CapacityBuffer gate (docs/batch.md).
	CapacityBuffers bool
}

// VirtualPods is the one place the shell gathers virtual pods
// (state.Objects.VirtualPods): for each kind that holds capacity it lists
// the objects and what sizing them reads, and calls that kind's pure
// sizing step. List calls it, so the provisioner, the disruption
// controller and explain see the same virtual pods; `capstan simulate`
// calls the same steps on its world. Each kind's pods carry
// state.VirtualPodAnnotationKey. ProvisioningRequests' read objs' pods
// and NodeClaims (provreq.Requests); they need no gate.
func VirtualPods(ctx context.Context, c client.Reader, src Sources, objs state.Objects) ([]corev1.Pod, error) {
	var out []corev1.Pod
	if src.CapacityBuffers {
		pods, err := bufferPods(ctx, c)
		if err != nil {
			return nil, err
		}
		out = append(out, pods...)
	}
	requests, err := ProvisioningRequests(ctx, c, objs)
	if err != nil {
		return nil, err
	}
	out = append(out, provreq.VirtualPods(requests)...)
	return out, nil
}

// bufferPods are the virtual pods of every CapacityBuffer the
// capacitybuffer controller sized (its status.replicas), of the chunk's
// pod template as it is now. Without the CRD there are none.
func bufferPods(ctx context.Context, c client.Reader) ([]corev1.Pod, error) {
	list := &autoscalingv1beta1.CapacityBufferList{}
	if err := c.List(ctx, list); err != nil {
		if meta.IsNoMatchError(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("listing capacitybuffers, %w", err)
	}
	var out []corev1.Pod
	for i := range list.Items {
		cb := &list.Items[i]
		if !meta.IsStatusConditionTrue(cb.Status.Conditions, autoscalingv1beta1.ConditionReadyForProvisioning) {
			continue
		}
		src, err := ResolveBuffer(ctx, c, nil, cb)
		if err != nil {
			return nil, err
		}
		out = append(out, buffers.VirtualPods(cb, cb.Status, src)...)
	}
	return out, nil
}

// ResolveBuffer reads what sizing a buffer takes: its PodTemplate, or its
// scalable object's pod template and (when scales is set) replicas
// through the scale subresource. A referent that is missing or of a kind
// Capstan cannot read a template from is reported in the Source, for the
// buffer's condition; only a failure to read is an error.
func ResolveBuffer(ctx context.Context, c client.Reader, scales client.SubResourceClientConstructor, cb *autoscalingv1beta1.CapacityBuffer) (buffers.Source, error) {
	switch {
	case cb.Spec.PodTemplateRef != nil:
		pt := &corev1.PodTemplate{}
		err := c.Get(ctx, client.ObjectKey{Namespace: cb.Namespace, Name: cb.Spec.PodTemplateRef.Name}, pt)
		if apierrors.IsNotFound(err) {
			return buffers.Source{Reason: buffers.ReasonPodTemplateNotFound, Message: err.Error()}, nil
		}
		if err != nil {
			return buffers.Source{}, fmt.Errorf("getting podtemplate %s/%s, %w", cb.Namespace, cb.Spec.PodTemplateRef.Name, err)
		}
		return buffers.Source{Template: &pt.Template, TemplateGeneration: pt.Generation}, nil
	case cb.Spec.ScalableRef != nil:
		return resolveScalable(ctx, c, scales, cb)
	}
	return buffers.Source{}, nil
}

// resolveScalable reads a Deployment's, StatefulSet's or ReplicaSet's pod
// template from its spec (the reference's pkg/utils/apps/resolve.go: no
// running pod needed), and its replicas through the scale subresource.
func resolveScalable(ctx context.Context, c client.Reader, scales client.SubResourceClientConstructor, cb *autoscalingv1beta1.CapacityBuffer) (buffers.Source, error) {
	ref := cb.Spec.ScalableRef
	var obj client.Object
	var template func() *corev1.PodTemplateSpec
	if ref.APIGroup == appsv1.GroupName || ref.APIGroup == "" {
		switch ref.Kind {
		case autoscalingv1beta1.KindDeployment:
			d := &appsv1.Deployment{}
			obj, template = d, func() *corev1.PodTemplateSpec { return &d.Spec.Template }
		case autoscalingv1beta1.KindStatefulSet:
			s := &appsv1.StatefulSet{}
			obj, template = s, func() *corev1.PodTemplateSpec { return &s.Spec.Template }
		case autoscalingv1beta1.KindReplicaSet:
			r := &appsv1.ReplicaSet{}
			obj, template = r, func() *corev1.PodTemplateSpec { return &r.Spec.Template }
		}
	}
	if obj == nil {
		return buffers.Source{Reason: buffers.ReasonResolutionFailed, Message: fmt.Sprintf(
			"scalableRef %s %q of group %q: Capstan reads the pod template of Deployments, StatefulSets and ReplicaSets (group apps)", ref.Kind, ref.Name, ref.APIGroup)}, nil
	}
	key := client.ObjectKey{Namespace: cb.Namespace, Name: ref.Name}
	err := c.Get(ctx, key, obj)
	if apierrors.IsNotFound(err) {
		return buffers.Source{Reason: buffers.ReasonScalableRefNotFound, Message: err.Error()}, nil
	}
	if err != nil {
		return buffers.Source{}, fmt.Errorf("getting %s %s, %w", ref.Kind, key, err)
	}
	src := buffers.Source{Template: template()}
	if scales != nil {
		scale := &autoscalingv1.Scale{}
		if err := scales.SubResource("scale").Get(ctx, obj, scale); err != nil {
			return buffers.Source{}, fmt.Errorf("getting the scale of %s %s, %w", ref.Kind, key, err)
		}
		src.ScaleReplicas = scale.Spec.Replicas
	}
	return src, nil
}
