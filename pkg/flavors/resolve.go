package flavors

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// UnknownFlavorError reports a pod annotation naming a flavor its model
// does not define. It is the pod author's mistake, so the controller
// reports it on the pod with reason ReasonUnknownInferenceFlavor.
type UnknownFlavorError struct {
	// Pod is "namespace/name".
	Pod string
	// Model is the OpenModel's name.
	Model string
	// Flavor is the first unknown name in the annotation.
	Flavor string
	// Known are the model's flavors in its order.
	Known []string
}

func (e *UnknownFlavorError) Error() string {
	known := "it defines no flavors, so remove the annotation"
	if len(e.Known) > 0 {
		known = "known flavors: " + strings.Join(e.Known, ", ")
	}
	return fmt.Sprintf("pod %s annotation %s names flavor %q, which OpenModel %s does not define; %s",
		e.Pod, FlavorsAnnotationKey, e.Flavor, e.Model, known)
}

// IsUnknownFlavor reports whether err is or wraps an *UnknownFlavorError.
func IsUnknownFlavor(err error) bool {
	var target *UnknownFlavorError
	return errors.As(err, &target)
}

// Resolve is ResolveWithNames without the flavor names.
func Resolve(pod *corev1.Pod, model *OpenModel) ([]corev1.NodeSelectorTerm, error) {
	terms, _, err := ResolveWithNames(pod, model)
	return terms, err
}

// ResolveWithNames returns the required node-selector terms Capstan's
// solver tries for a model-serving pod, in preference order, and in
// parallel the flavor each term comes from, so the controller can record
// which flavor a placement chose.
//
// The flavor order is the pod's FlavorsAnnotationKey annotation when
// present (comma-separated; whitespace around names trimmed; an empty or
// repeated entry, more than MaxFlavors entries, or a name the model lacks
// is an error, the last an *UnknownFlavorError), else the model's own
// order (more than MaxFlavors flavors is an error).
//
// Each flavor's nodeSelector becomes `key In [value]` expressions, keys
// sorted. With the pod's required node-affinity terms T1..Tn the result is
// flavor-major: [F1∧T1, …, F1∧Tn, F2∧T1, …], each term the flavor's
// expressions followed by the existing term's (MatchFields kept),
// unsimplified even when they conflict. Without required terms it is one
// term per flavor. A flavor with an empty nodeSelector contributes no
// expressions, so its term may be empty: for the solver, which ANDs the
// pod's spec.nodeSelector into every term itself, an empty term means any
// node. These terms must never be written to a pod, where kube-scheduler
// would read an empty term as matching nothing.
//
// A model without flavors (and no annotation) leaves the pod's own
// required terms, copied, with "" as each name; nil when the pod has none,
// meaning no restriction beyond spec.nodeSelector.
//
// The pod must carry ModelNameLabelKey equal to model.Name, the model's
// flavor names must be non-empty and unique (FromUnstructured ensures it),
// and a required node affinity must not be an empty term list (which the
// API server rejects). Neither input is modified and the result shares no
// memory with them.
func ResolveWithNames(pod *corev1.Pod, model *OpenModel) ([]corev1.NodeSelectorTerm, []string, error) {
	if pod == nil || model == nil {
		return nil, nil, errors.New("resolving inference flavors: pod and model are required")
	}
	podName := pod.Namespace + "/" + pod.Name
	name, ok := ModelName(pod)
	if !ok {
		return nil, nil, fmt.Errorf("resolving inference flavors for pod %s, it has no label %s", podName, ModelNameLabelKey)
	}
	if name != model.Name {
		return nil, nil, fmt.Errorf("resolving inference flavors for pod %s, label %s is %q, want OpenModel %q",
			podName, ModelNameLabelKey, name, model.Name)
	}
	byName, err := indexFlavors(model)
	if err != nil {
		return nil, nil, fmt.Errorf("resolving inference flavors for pod %s, %w", podName, err)
	}
	existing, err := requiredTerms(pod)
	if err != nil {
		return nil, nil, fmt.Errorf("resolving inference flavors for pod %s, %w", podName, err)
	}
	order, err := flavorOrder(pod, model, byName)
	if err != nil {
		if IsUnknownFlavor(err) {
			return nil, nil, err
		}
		return nil, nil, fmt.Errorf("resolving inference flavors for pod %s, %w", podName, err)
	}
	if len(order) == 0 {
		if existing == nil {
			return nil, nil, nil
		}
		terms := make([]corev1.NodeSelectorTerm, len(existing))
		for i := range existing {
			existing[i].DeepCopyInto(&terms[i])
		}
		return terms, make([]string, len(terms)), nil
	}
	if existing == nil {
		// One neutral term, so the product below yields one term per flavor.
		existing = []corev1.NodeSelectorTerm{{}}
	}
	terms := make([]corev1.NodeSelectorTerm, 0, len(order)*len(existing))
	names := make([]string, 0, cap(terms))
	for _, f := range order {
		for _, t := range existing {
			var term corev1.NodeSelectorTerm
			t.DeepCopyInto(&term)
			// Built afresh per term so no two terms share a slice.
			if exprs := selectorExpressions(f.NodeSelector); len(exprs) > 0 {
				term.MatchExpressions = append(exprs, term.MatchExpressions...)
			}
			terms = append(terms, term)
			names = append(names, f.Name)
		}
	}
	return terms, names, nil
}

// indexFlavors maps names to flavors, rejecting models FromUnstructured
// would have rejected, since a hand-built model skips the decoder.
func indexFlavors(model *OpenModel) (map[string]*Flavor, error) {
	byName := make(map[string]*Flavor, len(model.Flavors))
	for i := range model.Flavors {
		f := &model.Flavors[i]
		if f.Name == "" {
			return nil, fmt.Errorf("OpenModel %s flavors[%d] has no name", model.Name, i)
		}
		if _, dup := byName[f.Name]; dup {
			return nil, fmt.Errorf("OpenModel %s defines flavor %q twice", model.Name, f.Name)
		}
		if err := checkResources(f.Requests); err != nil {
			return nil, &InvalidModelError{fmt.Errorf("OpenModel %s flavor %q resources, %w", model.Name, f.Name, err)}
		}
		byName[f.Name] = f
	}
	return byName, nil
}

// requiredTerms returns the pod's required node-selector terms, nil when it
// has no required node affinity.
func requiredTerms(pod *corev1.Pod) ([]corev1.NodeSelectorTerm, error) {
	aff := pod.Spec.Affinity
	if aff == nil || aff.NodeAffinity == nil || aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return nil, nil
	}
	terms := aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) == 0 {
		// Matches no node; returning nil would read as "no restriction".
		return nil, errors.New("required node affinity has no terms and matches no node")
	}
	return terms, nil
}

// flavorOrder picks the flavors to try, best first.
func flavorOrder(pod *corev1.Pod, model *OpenModel, byName map[string]*Flavor) ([]*Flavor, error) {
	value, ok := pod.Annotations[FlavorsAnnotationKey]
	if !ok {
		if len(model.Flavors) > MaxFlavors {
			return nil, fmt.Errorf("OpenModel %s has %d flavors, at most %d are tried; select at most %d with annotation %s",
				model.Name, len(model.Flavors), MaxFlavors, MaxFlavors, FlavorsAnnotationKey)
		}
		order := make([]*Flavor, len(model.Flavors))
		for i := range model.Flavors {
			order[i] = &model.Flavors[i]
		}
		return order, nil
	}
	entries := strings.Split(value, ",")
	seen := make(map[string]bool, len(entries))
	for i, e := range entries {
		e = strings.TrimSpace(e)
		if e == "" {
			return nil, fmt.Errorf("annotation %s=%q, entry %d is empty", FlavorsAnnotationKey, value, i)
		}
		if seen[e] {
			return nil, fmt.Errorf("annotation %s=%q, flavor %q is repeated", FlavorsAnnotationKey, value, e)
		}
		seen[e] = true
		entries[i] = e
	}
	if len(entries) > MaxFlavors {
		return nil, fmt.Errorf("annotation %s names %d flavors, at most %d are allowed", FlavorsAnnotationKey, len(entries), MaxFlavors)
	}
	order := make([]*Flavor, len(entries))
	for i, e := range entries {
		f, ok := byName[e]
		if !ok {
			return nil, &UnknownFlavorError{Pod: pod.Namespace + "/" + pod.Name, Model: model.Name, Flavor: e, Known: model.flavorNames()}
		}
		order[i] = f
	}
	return order, nil
}

// selectorExpressions turns label equality into In expressions, keys
// sorted so the same model always yields the same terms.
func selectorExpressions(sel map[string]string) []corev1.NodeSelectorRequirement {
	if len(sel) == 0 {
		return nil
	}
	keys := make([]string, 0, len(sel))
	for k := range sel {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]corev1.NodeSelectorRequirement, len(keys))
	for i, k := range keys {
		out[i] = corev1.NodeSelectorRequirement{Key: k, Operator: corev1.NodeSelectorOpIn, Values: []string{sel[k]}}
	}
	return out
}
