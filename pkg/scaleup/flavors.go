package scaleup

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/capstan-dev/capstan/pkg/flavors"
	"github.com/capstan-dev/capstan/pkg/scheduling"
)

// applyFlavors rewrites each llmaz model-serving pod's required node
// affinity into its flavors' ordered terms (seed 001), so the solver tries
// the preferred GPU first, and sizes each term with its flavor's
// resources (termRequests). Pods whose flavors can't be resolved are left
// out and reported. The pods are the snapshot's own copies; the objects in
// the API server are never changed.
func applyFlavors(pods []*corev1.Pod, models flavors.Models) ([]*corev1.Pod, resolvedFlavors, []FlavorFailure) {
	var kept []*corev1.Pod
	var failures []FlavorFailure
	out := resolvedFlavors{names: map[*corev1.Pod][]string{}, requests: map[*corev1.Pod][]scheduling.Resources{}}
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
			reason := ReasonOpenModelNotFound
			if flavors.IsInvalidModel(err) {
				reason = flavors.ReasonInvalidOpenModel
			}
			failures = append(failures, FlavorFailure{Pod: pod, Reason: reason, Err: err})
			continue
		}
		terms, flavorNames, err := flavors.ResolveWithNames(pod, model)
		if err != nil {
			failures = append(failures, FlavorFailure{Pod: pod, Reason: resolveReason(err), Err: err})
			continue
		}
		if len(terms) > 0 {
			if requests := termRequests(pod, model, flavorNames); requests != nil {
				out.requests[pod] = requests
			}
			setTerms(pod, terms)
			out.names[pod] = flavorNames
		}
		kept = append(kept, pod)
	}
	return kept, out, failures
}

// Reasons a model-serving pod is not provisioned for, beside
// flavors.ReasonUnknownInferenceFlavor and flavors.ReasonInvalidOpenModel.
const (
	ReasonOpenModelNotFound       = "OpenModelNotFound"
	ReasonInvalidInferenceFlavors = "InvalidInferenceFlavors"
)

// resolveReason is the pod event reason for a ResolveWithNames error.
func resolveReason(err error) string {
	switch {
	case flavors.IsUnknownFlavor(err):
		return flavors.ReasonUnknownInferenceFlavor
	case flavors.IsInvalidModel(err):
		return flavors.ReasonInvalidOpenModel
	}
	return ReasonInvalidInferenceFlavors
}

// resolvedFlavors are, by pod, the flavor of each of its terms and what
// it requests by each (only pods some flavor of which names resources).
type resolvedFlavors struct {
	names    map[*corev1.Pod][]string
	requests map[*corev1.Pod][]scheduling.Resources
}

// termRequests are what the pod requests by each term: as llmaz renders
// it for the term's flavor (flavors.WithResources), and never less than
// the pod's own requests, which kube-scheduler binds it by: a node sized
// below them would not take the pod (docs/gpu-flavors.md). nil when no
// flavor names resources: the pod's own requests hold for every term.
func termRequests(pod *corev1.Pod, model *flavors.OpenModel, names []string) []scheduling.Resources {
	sized := false
	for _, f := range model.Flavors {
		sized = sized || len(f.Requests) > 0
	}
	if !sized {
		return nil
	}
	own := scheduling.PodRequests(pod)
	out := make([]scheduling.Resources, len(names))
	for i, name := range names {
		f, _ := model.Flavor(name)
		out[i] = scheduling.PodRequests(flavors.WithResources(pod, f)).Max(own)
	}
	return out
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
// flavors, and knows when it runs on a later one. The copies' requests by
// term, as the provisioner sizes them (applyFlavors), come with them, for
// the solve's provisioning.Input.TermRequests. A pod whose flavors do not
// resolve (now) is kept as it is: the provisioner reports those.
func PinFlavors(pods []*corev1.Pod, models flavors.Models) ([]*corev1.Pod, map[*corev1.Pod][]scheduling.Resources) {
	if !models.Installed {
		return pods, nil
	}
	out := make([]*corev1.Pod, len(pods))
	var requests map[*corev1.Pod][]scheduling.Resources
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
		terms, names, err := flavors.ResolveWithNames(pod, model)
		if err != nil || len(terms) == 0 {
			continue
		}
		cp := pod.DeepCopy()
		if tr := termRequests(pod, model, names); tr != nil {
			if requests == nil {
				requests = map[*corev1.Pod][]scheduling.Resources{}
			}
			requests[cp] = tr
		}
		setTerms(cp, terms)
		out[i] = cp
	}
	return out, requests
}
