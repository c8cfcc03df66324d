package scaleup

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/capstan-dev/capstan/pkg/flavors"
)

// applyFlavors rewrites each llmaz model-serving pod's required node
// affinity into its flavors' ordered terms (seed 001), so the solver tries
// the preferred GPU first. Pods whose flavors can't be resolved are left
// out and reported. The pods are the snapshot's own copies; the objects in
// the API server are never changed.
func applyFlavors(pods []*corev1.Pod, models flavors.Models) ([]*corev1.Pod, map[*corev1.Pod][]string, []FlavorFailure) {
	var kept []*corev1.Pod
	var failures []FlavorFailure
	names := map[*corev1.Pod][]string{}
	for _, pod := range pods {
		name, ok := flavors.ModelName(pod)
		if !ok {
			kept = append(kept, pod)
			continue
		}
		model, installed, err := models.Lookup(name)
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
			setTerms(pod, terms)
			names[pod] = flavorNames
		}
		kept = append(kept, pod)
	}
	return kept, names, failures
}

// setTerms makes terms pod's required node affinity.
func setTerms(pod *corev1.Pod, terms []corev1.NodeSelectorTerm) {
	if pod.Spec.Affinity == nil {
		pod.Spec.Affinity = &corev1.Affinity{}
	}
	if pod.Spec.Affinity.NodeAffinity == nil {
		pod.Spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{NodeSelectorTerms: terms}
}

// PinFlavors is pods with each running llmaz model-serving pod replaced
// by a copy whose required node affinity is its flavors' ordered terms,
// as the provisioner solved it: so disruption moves it only within its
// flavors, and knows when it runs on a later one. A pod whose flavors do
// not resolve (now) is kept as it is: the provisioner reports those.
func PinFlavors(pods []*corev1.Pod, models flavors.Models) []*corev1.Pod {
	if !models.Installed {
		return pods
	}
	out := make([]*corev1.Pod, len(pods))
	for i, pod := range pods {
		out[i] = pod
		name, ok := flavors.ModelName(pod)
		if !ok {
			continue
		}
		model, installed, err := models.Lookup(name)
		if !installed || err != nil {
			continue
		}
		terms, _, err := flavors.ResolveWithNames(pod, model)
		if err != nil || len(terms) == 0 {
			continue
		}
		cp := pod.DeepCopy()
		setTerms(cp, terms)
		out[i] = cp
	}
	return out
}
