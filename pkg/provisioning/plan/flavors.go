package plan

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"github.com/capstan-dev/capstan/pkg/flavors"
)

// ModelLookup finds an OpenModel by name; ok is false when the llmaz API is
// not installed.
type ModelLookup func(ctx context.Context, name string) (model *flavors.OpenModel, ok bool, err error)

// applyFlavors rewrites each llmaz model-serving pod's required node
// affinity into its flavors' ordered terms (seed 001), so the solver tries
// the preferred GPU first. Pods whose flavors can't be resolved are left
// out and reported. The pods are the snapshot's own copies; the objects in
// the API server are never changed.
func applyFlavors(ctx context.Context, pods []*corev1.Pod, lookup ModelLookup) ([]*corev1.Pod, map[*corev1.Pod][]string, []FlavorFailure) {
	var kept []*corev1.Pod
	var failures []FlavorFailure
	names := map[*corev1.Pod][]string{}
	for _, pod := range pods {
		name, ok := flavors.ModelName(pod)
		if !ok {
			kept = append(kept, pod)
			continue
		}
		model, installed, err := lookup(ctx, name)
		switch {
		case !installed:
			kept = append(kept, pod)
			continue
		case err != nil:
			failures = append(failures, FlavorFailure{Pod: pod, Reason: "OpenModelNotFound", Err: err})
			continue
		}
		terms, flavorNames, err := flavors.ResolveWithNames(pod, model)
		if err != nil {
			reason := "InvalidInferenceFlavors"
			if flavors.IsUnknownFlavor(err) {
				reason = flavors.ReasonUnknownInferenceFlavor
			}
			failures = append(failures, FlavorFailure{Pod: pod, Reason: reason, Err: err})
			continue
		}
		if len(terms) > 0 {
			if pod.Spec.Affinity == nil {
				pod.Spec.Affinity = &corev1.Affinity{}
			}
			if pod.Spec.Affinity.NodeAffinity == nil {
				pod.Spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
			}
			pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{NodeSelectorTerms: terms}
			names[pod] = flavorNames
		}
		kept = append(kept, pod)
	}
	return kept, names, failures
}
