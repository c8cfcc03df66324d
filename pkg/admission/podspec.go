package admission

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// PodSpec checks a pod spec, of a Pod or a workload's template, as
// the API server's pod validation (k8s.io/kubernetes
// pkg/apis/core/validation, which this module must not import) checks
// what simulate reads: containers and their resources, the node
// selector, tolerations, affinity and topology spread, with the server's
// paths and messages. Where a check depends on a feature gate, the
// gate's default in the Kubernetes version go.mod pins decides.
func PodSpec(spec *corev1.PodSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(spec.Containers) == 0 {
		errs = append(errs, field.Required(path.Child("containers"), ""))
	}
	for _, group := range []struct {
		child      string
		containers []corev1.Container
	}{{"initContainers", spec.InitContainers}, {"containers", spec.Containers}} {
		for i, c := range group.containers {
			errs = append(errs, containerResources(c.Resources, path.Child(group.child).Index(i).Child("resources"))...)
		}
	}
	errs = append(errs, metav1validation.ValidateLabels(spec.NodeSelector, path.Child("nodeSelector"))...)
	errs = append(errs, tolerations(spec.Tolerations, path.Child("tolerations"))...)
	if a := spec.Affinity; a != nil {
		affinity := path.Child("affinity")
		if a.NodeAffinity != nil {
			errs = append(errs, nodeAffinity(a.NodeAffinity, affinity.Child("nodeAffinity"))...)
		}
		if a.PodAffinity != nil {
			errs = append(errs, podAffinityTerms(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution, affinity.Child("podAffinity"))...)
		}
		if a.PodAntiAffinity != nil {
			errs = append(errs, podAffinityTerms(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution, affinity.Child("podAntiAffinity"))...)
		}
	}
	return append(errs, topologySpreadConstraints(spec.TopologySpreadConstraints, path.Child("topologySpreadConstraints"))...)
}

// containerResources checks a container's resource names and quantities,
// and that each request is at most its limit; extended resources and
// hugepages, which are not overcommitted, must request what they limit.
func containerResources(r corev1.ResourceRequirements, path *field.Path) field.ErrorList {
	limits, requests := path.Child("limits"), path.Child("requests")
	var errs field.ErrorList
	for _, name := range slices.Sorted(maps.Keys(r.Limits)) {
		errs = append(errs, resourceQuantity(name, r.Limits[name], limits.Key(string(name)))...)
	}
	for _, name := range slices.Sorted(maps.Keys(r.Requests)) {
		q := r.Requests[name]
		errs = append(errs, resourceQuantity(name, q, requests.Key(string(name)))...)
		limit, ok := r.Limits[name]
		switch {
		case !ok && !overcommittable(name):
			errs = append(errs, field.Required(limits, "Limit must be set for non overcommitable resources"))
		case !ok:
		case !overcommittable(name) && q.Cmp(limit) != 0:
			errs = append(errs, field.Invalid(requests, q.String(), fmt.Sprintf("must be equal to %s limit of %s", name, limit.String())))
		case q.Cmp(limit) > 0:
			errs = append(errs, field.Invalid(requests, q.String(), fmt.Sprintf("must be less than or equal to %s limit of %s", name, limit.String())))
		}
	}
	return errs
}

// resourceQuantity checks one resource a container requests or limits:
// a name it may, and a quantity that is not negative, whole for
// extended resources.
func resourceQuantity(name corev1.ResourceName, q resource.Quantity, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(string(name)) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	switch {
	case len(errs) > 0:
	case !strings.Contains(string(name), "/"):
		if !slices.Contains([]corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage}, name) && !hugePages(name) {
			errs = append(errs, field.Invalid(path, name, "must be a standard resource for containers"))
		}
	case !native(name) && !extended(name):
		errs = append(errs, field.Invalid(path, name, "doesn't follow extended resource name standard"))
	}
	if q.Sign() < 0 {
		errs = append(errs, field.Invalid(path, q.String(), apivalidation.IsNegativeErrorMsg))
	}
	if extended(name) && q.MilliValue()%1000 != 0 {
		errs = append(errs, field.Invalid(path, q.String(), "must be an integer"))
	}
	return errs
}

// native resources are Kubernetes' own: unprefixed, or in a
// kubernetes.io domain.
func native(name corev1.ResourceName) bool {
	return !strings.Contains(string(name), "/") || strings.Contains(string(name), corev1.ResourceDefaultNamespacePrefix)
}

// extended resources are a device plugin's or the cluster operator's:
// prefixed by another domain, and valid as a quota name.
func extended(name corev1.ResourceName) bool {
	return !native(name) && !strings.HasPrefix(string(name), corev1.DefaultResourceRequestsPrefix) &&
		len(validation.IsQualifiedName(corev1.DefaultResourceRequestsPrefix+string(name))) == 0
}

func hugePages(name corev1.ResourceName) bool {
	return strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix)
}

func overcommittable(name corev1.ResourceName) bool {
	return native(name) && !hugePages(name)
}

// tolerations checks tolerations as the server does with the alpha
// TaintTolerationComparisonOperators gate off, its default: only Equal
// and Exists, which simulate's scheduling implements.
func tolerations(tolerations []corev1.Toleration, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range tolerations {
		p := path.Index(i)
		if t.Key != "" {
			errs = append(errs, metav1validation.ValidateLabelName(t.Key, p.Child("key"))...)
		}
		if t.Key == "" && t.Operator != corev1.TolerationOpExists {
			errs = append(errs, field.Invalid(p.Child("operator"), t.Operator, "operator must be Exists when `key` is empty, which means \"match all values and all keys\""))
		}
		if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
			errs = append(errs, field.Invalid(p.Child("effect"), t.Effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
		}
		switch t.Operator {
		case corev1.TolerationOpEqual, "":
			if msgs := validation.IsValidLabelValue(t.Value); len(msgs) > 0 {
				errs = append(errs, field.Invalid(p.Child("operator"), t.Value, strings.Join(msgs, ";")))
			}
		case corev1.TolerationOpExists:
			if t.Value != "" {
				errs = append(errs, field.Invalid(p.Child("operator"), t.Value, "value must be empty when `operator` is 'Exists'"))
			}
		default:
			errs = append(errs, field.NotSupported(p.Child("operator"), t.Operator, []corev1.TolerationOperator{corev1.TolerationOpEqual, corev1.TolerationOpExists}))
		}
		switch t.Effect {
		case "", corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			errs = append(errs, field.NotSupported(p.Child("effect"), t.Effect, []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute}))
		}
	}
	return errs
}

func nodeAffinity(na *corev1.NodeAffinity, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if ns := na.RequiredDuringSchedulingIgnoredDuringExecution; ns != nil {
		terms := path.Child("requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
		if len(ns.NodeSelectorTerms) == 0 {
			errs = append(errs, field.Required(terms, "must have at least one node selector term"))
		}
		for i, term := range ns.NodeSelectorTerms {
			errs = append(errs, nodeSelectorTerm(term, true, terms.Index(i))...)
		}
	}
	preferred := path.Child("preferredDuringSchedulingIgnoredDuringExecution")
	for i, term := range na.PreferredDuringSchedulingIgnoredDuringExecution {
		errs = append(errs, weight(term.Weight, preferred.Index(i).Child("weight"))...)
		// Preferred terms may name values no label has: they only rank.
		errs = append(errs, nodeSelectorTerm(term.Preference, false, preferred.Index(i).Child("preference"))...)
	}
	return errs
}

func nodeSelectorTerm(term corev1.NodeSelectorTerm, labelValues bool, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, rq := range term.MatchExpressions {
		p := path.Child("matchExpressions").Index(i)
		switch rq.Operator {
		case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
			if len(rq.Values) == 0 {
				errs = append(errs, field.Required(p.Child("values"), "must be specified when `operator` is 'In' or 'NotIn'"))
			}
		case corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
			if len(rq.Values) > 0 {
				errs = append(errs, field.Forbidden(p.Child("values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
			}
		case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
			if len(rq.Values) != 1 {
				errs = append(errs, field.Required(p.Child("values"), "must be specified single value when `operator` is 'Lt' or 'Gt'"))
			}
		default:
			errs = append(errs, field.Invalid(p.Child("operator"), rq.Operator, "not a valid selector operator"))
		}
		errs = append(errs, metav1validation.ValidateLabelName(rq.Key, p.Child("key"))...)
		for j, v := range rq.Values {
			if labelValues {
				for _, msg := range validation.IsValidLabelValue(v) {
					errs = append(errs, field.Invalid(p.Child("values").Index(j), v, msg))
				}
			}
		}
	}
	// The only field a node selector term may match is the node's name.
	for i, rq := range term.MatchFields {
		p := path.Child("matchFields").Index(i)
		switch rq.Operator {
		case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
			if len(rq.Values) != 1 {
				errs = append(errs, field.Required(p.Child("values"), "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"))
			}
		default:
			errs = append(errs, field.Invalid(p.Child("operator"), rq.Operator, "not a valid selector operator"))
		}
		if rq.Key != metav1.ObjectNameField {
			errs = append(errs, field.Invalid(p.Child("key"), rq.Key, "not a valid field selector key"))
			continue
		}
		for j, v := range rq.Values {
			for _, msg := range validation.IsDNS1123Subdomain(v) {
				errs = append(errs, field.Invalid(p.Child("values").Index(j), v, msg))
			}
		}
	}
	return errs
}

func weight(w int32, path *field.Path) field.ErrorList {
	if w <= 0 || w > 100 {
		return field.ErrorList{field.Invalid(path, w, "must be in the range 1-100")}
	}
	return nil
}

// podAffinityTerms checks the terms of a podAffinity or podAntiAffinity.
func podAffinityTerms(required []corev1.PodAffinityTerm, preferred []corev1.WeightedPodAffinityTerm, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, term := range required {
		errs = append(errs, podAffinityTerm(term, path.Child("requiredDuringSchedulingIgnoredDuringExecution").Index(i))...)
	}
	for i, term := range preferred {
		p := path.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i)
		errs = append(errs, weight(term.Weight, p.Child("weight"))...)
		errs = append(errs, podAffinityTerm(term.PodAffinityTerm, p.Child("podAffinityTerm"))...)
	}
	return errs
}

func podAffinityTerm(term corev1.PodAffinityTerm, path *field.Path) field.ErrorList {
	opts := metav1validation.LabelSelectorValidationOptions{}
	errs := metav1validation.ValidateLabelSelector(term.LabelSelector, opts, path.Child("labelSelector"))
	errs = append(errs, metav1validation.ValidateLabelSelector(term.NamespaceSelector, opts, path.Child("namespaceSelector"))...)
	for i, ns := range term.Namespaces {
		for _, msg := range apivalidation.ValidateNamespaceName(ns, false) {
			errs = append(errs, field.Invalid(path.Child("namespaces").Index(i), ns, msg))
		}
	}
	errs = append(errs, labelKeys(term.MatchLabelKeys, term.LabelSelector, path.Child("matchLabelKeys"))...)
	errs = append(errs, labelKeys(term.MismatchLabelKeys, term.LabelSelector, path.Child("mismatchLabelKeys"))...)
	if term.TopologyKey == "" {
		return append(errs, field.Required(path.Child("topologyKey"), "can not be empty"))
	}
	return append(errs, metav1validation.ValidateLabelName(term.TopologyKey, path.Child("topologyKey"))...)
}

// labelKeys checks matchLabelKeys or mismatchLabelKeys, which narrow a
// label selector by the pod's own labels, so need one.
func labelKeys(keys []string, selector *metav1.LabelSelector, path *field.Path) field.ErrorList {
	if len(keys) == 0 {
		return nil
	}
	if selector == nil {
		return field.ErrorList{field.Forbidden(path, "must not be specified when labelSelector is not set")}
	}
	var errs field.ErrorList
	for i, key := range keys {
		errs = append(errs, metav1validation.ValidateLabelName(key, path.Index(i))...)
	}
	return errs
}

func topologySpreadConstraints(constraints []corev1.TopologySpreadConstraint, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, c := range constraints {
		p := path.Index(i)
		if c.MaxSkew <= 0 {
			errs = append(errs, field.Invalid(p.Child("maxSkew"), c.MaxSkew, "must be greater than 0"))
		}
		if c.TopologyKey == "" {
			errs = append(errs, field.Required(p.Child("topologyKey"), "can not be empty"))
		}
		actions := []corev1.UnsatisfiableConstraintAction{corev1.DoNotSchedule, corev1.ScheduleAnyway}
		if !slices.Contains(actions, c.WhenUnsatisfiable) {
			errs = append(errs, field.NotSupported(p.Child("whenUnsatisfiable"), c.WhenUnsatisfiable, actions))
		}
		// {topologyKey, whenUnsatisfiable} identifies a constraint.
		for _, later := range constraints[i+1:] {
			if later.TopologyKey == c.TopologyKey && later.WhenUnsatisfiable == c.WhenUnsatisfiable {
				errs = append(errs, field.Duplicate(p.Child("{topologyKey, whenUnsatisfiable}"), fmt.Sprintf("{%v, %v}", c.TopologyKey, c.WhenUnsatisfiable)))
				break
			}
		}
		if c.MinDomains != nil {
			if *c.MinDomains <= 0 {
				errs = append(errs, field.Invalid(p.Child("minDomains"), *c.MinDomains, "must be greater than 0"))
			}
			if c.WhenUnsatisfiable != corev1.DoNotSchedule {
				errs = append(errs, field.Invalid(p.Child("minDomains"), *c.MinDomains, fmt.Sprintf("can only use minDomains if whenUnsatisfiable=%s, not %s", corev1.DoNotSchedule, c.WhenUnsatisfiable)))
			}
		}
		policies := []corev1.NodeInclusionPolicy{corev1.NodeInclusionPolicyHonor, corev1.NodeInclusionPolicyIgnore}
		if c.NodeAffinityPolicy != nil && !slices.Contains(policies, *c.NodeAffinityPolicy) {
			errs = append(errs, field.NotSupported(p.Child("nodeAffinityPolicy"), *c.NodeAffinityPolicy, policies))
		}
		if c.NodeTaintsPolicy != nil && !slices.Contains(policies, *c.NodeTaintsPolicy) {
			errs = append(errs, field.NotSupported(p.Child("nodeTaintsPolicy"), *c.NodeTaintsPolicy, policies))
		}
		errs = append(errs, labelKeys(c.MatchLabelKeys, c.LabelSelector, p.Child("matchLabelKeys"))...)
		errs = append(errs, metav1validation.ValidateLabelSelector(c.LabelSelector, metav1validation.LabelSelectorValidationOptions{}, p.Child("labelSelector"))...)
	}
	return errs
}
