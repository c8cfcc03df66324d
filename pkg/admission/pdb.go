package admission

import (
	"strconv"
	"strings"

	policyv1 "k8s.io/api/policy/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// PodDisruptionBudget checks pdb's spec as the API server does on
// create (k8s.io/kubernetes pkg/apis/policy/validation,
// ValidatePodDisruptionBudgetSpec): one of minAvailable and
// maxUnavailable, each a non-negative count or a percentage of at most
// 100%, a valid label selector and a known unhealthyPodEvictionPolicy.
// A PDB the server refuses would otherwise block every eviction in
// simulate.
func PodDisruptionBudget(pdb *policyv1.PodDisruptionBudget) field.ErrorList {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	if pdb.Spec.MinAvailable != nil && pdb.Spec.MaxUnavailable != nil {
		errs = append(errs, field.Invalid(spec, field.OmitValueType{}, "minAvailable and maxUnavailable cannot be both set"))
	}
	errs = append(errs, intOrPercent(pdb.Spec.MinAvailable, spec.Child("minAvailable"))...)
	errs = append(errs, intOrPercent(pdb.Spec.MaxUnavailable, spec.Child("maxUnavailable"))...)
	errs = append(errs, metav1validation.ValidateLabelSelector(pdb.Spec.Selector, metav1validation.LabelSelectorValidationOptions{}, spec.Child("selector"))...)
	policies := []policyv1.UnhealthyPodEvictionPolicyType{policyv1.AlwaysAllow, policyv1.IfHealthyBudget}
	if p := pdb.Spec.UnhealthyPodEvictionPolicy; p != nil && *p != policyv1.AlwaysAllow && *p != policyv1.IfHealthyBudget {
		errs = append(errs, field.NotSupported(spec.Child("unhealthyPodEvictionPolicy"), *p, policies))
	}
	return errs
}

// intOrPercent checks a count or percentage as the apps API's
// ValidatePositiveIntOrPercent and IsNotMoreThan100Percent do
// (k8s.io/kubernetes pkg/apis/apps/validation).
func intOrPercent(v *intstr.IntOrString, path *field.Path) field.ErrorList {
	switch {
	case v == nil:
		return nil
	case v.Type == intstr.String:
		var errs field.ErrorList
		for _, msg := range validation.IsValidPercent(v.StrVal) {
			errs = append(errs, field.Invalid(path, v.StrVal, msg))
		}
		if len(errs) > 0 {
			return errs
		}
		// A percentage too long for an int is refused too, where the
		// server lets it through and its disruption controller then
		// cannot scale it.
		if n, err := strconv.Atoi(strings.TrimSuffix(v.StrVal, "%")); err != nil || n > 100 {
			return field.ErrorList{field.Invalid(path, v.StrVal, "must not be greater than 100%")}
		}
		return nil
	default:
		return apivalidation.ValidateNonnegativeField(int64(v.IntVal), path)
	}
}
