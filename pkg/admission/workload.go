package admission

import (
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Pod checks a Pod's spec (its metadata, labels included, is checked
// with every kind's).
func Pod(p *corev1.Pod) field.ErrorList {
	return PodSpec(&p.Spec, field.NewPath("spec"))
}

// Deployment checks d as the apps API does on create.
func Deployment(d *appsv1.Deployment) field.ErrorList {
	return controller("deployment", d.Spec.Replicas, d.Spec.Selector, &d.Spec.Template)
}

// ReplicaSet checks rs as the apps API does on create.
func ReplicaSet(rs *appsv1.ReplicaSet) field.ErrorList {
	return controller("replicaset", rs.Spec.Replicas, rs.Spec.Selector, &rs.Spec.Template)
}

// StatefulSet checks ss as the apps API does on create.
func StatefulSet(ss *appsv1.StatefulSet) field.ErrorList {
	return controller("statefulset", ss.Spec.Replicas, ss.Spec.Selector, &ss.Spec.Template)
}

// DaemonSet checks ds as the apps API does on create.
func DaemonSet(ds *appsv1.DaemonSet) field.ErrorList {
	return controller("daemonset", nil, ds.Spec.Selector, &ds.Spec.Template)
}

// controller checks a workload controller the way the apps API does: a
// non-negative replica count, a non-empty selector its template's
// labels match, and a template simulate can run.
func controller(kind string, replicas *int32, selector *metav1.LabelSelector, template *corev1.PodTemplateSpec) field.ErrorList {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	if replicas != nil {
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(*replicas), spec.Child("replicas"))...)
	}
	errs = append(errs, selectorOf(kind, selector, template.Labels, spec)...)
	return append(errs, podTemplate(template, spec.Child("template"))...)
}

// podTemplate checks a pod template's labels and annotations as the API
// server's ValidatePodTemplateSpec does (k8s.io/kubernetes
// pkg/apis/core/validation; its paths name the inlined metadata's fields
// under the template), and its spec.
func podTemplate(template *corev1.PodTemplateSpec, path *field.Path) field.ErrorList {
	errs := metav1validation.ValidateLabels(template.Labels, path.Child("labels"))
	errs = append(errs, apivalidation.ValidateAnnotations(template.Annotations, path.Child("annotations"))...)
	return append(errs, PodSpec(&template.Spec, path.Child("spec"))...)
}

// selectorOf checks spec.selector, which simulate matches pods with.
func selectorOf(kind string, selector *metav1.LabelSelector, templateLabels map[string]string, spec *field.Path) field.ErrorList {
	path := spec.Child("selector")
	if selector == nil {
		return field.ErrorList{field.Required(path, "")}
	}
	if errs := metav1validation.ValidateLabelSelector(selector, metav1validation.LabelSelectorValidationOptions{}, path); len(errs) > 0 {
		return errs
	}
	sel, err := metav1.LabelSelectorAsSelector(selector)
	switch {
	case err != nil:
		return field.ErrorList{field.Invalid(path, selector, err.Error())}
	case sel.Empty():
		return field.ErrorList{field.Invalid(path, selector, "empty selector is invalid for "+kind)}
	case !sel.Matches(labels.Set(templateLabels)):
		return field.ErrorList{field.Invalid(spec.Child("template", "metadata", "labels"), templateLabels, "`selector` does not match template `labels`")}
	}
	return nil
}

// Job checks j as the batch API does on create: its template, whose
// pods must end.
func Job(j *batchv1.Job) field.ErrorList {
	template := field.NewPath("spec", "template")
	errs := podTemplate(&j.Spec.Template, template)
	// A Job's pods must end; the server rejects the default Always.
	if policies := []corev1.RestartPolicy{corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever}; !slices.Contains(policies, j.Spec.Template.Spec.RestartPolicy) {
		errs = append(errs, field.NotSupported(template.Child("spec", "restartPolicy"), j.Spec.Template.Spec.RestartPolicy, policies))
	}
	return errs
}
