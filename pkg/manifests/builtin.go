package manifests

import (
	"encoding/json"
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-dev/capstan/pkg/admission"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
)

// builtinKind reads one built-in kind into its list in a Set.
type builtinKind struct {
	namespaced bool
	// read decodes obj strictly, admits it and appends it to set.
	read func(obj map[string]any, set *Set) []error
}

// builtin makes the builtinKind for T: name validates metadata.name as
// the API server does for the kind; admit, if set, defaults and checks
// what simulate needs, with the server's messages.
func builtin[T any, P interface {
	*T
	metav1.Object
}](namespaced bool, name apivalidation.ValidateNameFunc, list func(*Set) *[]T, admit func(P) field.ErrorList) builtinKind {
	return builtinKind{namespaced: namespaced, read: func(obj map[string]any, set *Set) []error {
		var typed T
		if err := decodeStrict(obj, &typed); err != nil {
			if errs := sim.MalformedValues(obj, reflect.TypeFor[T](), nil); len(errs) > 0 {
				return fieldErrors(errs)
			}
			return []error{err}
		}
		errs := apivalidation.ValidateObjectMetaAccessor(P(&typed), namespaced, name, field.NewPath("metadata"))
		if admit != nil {
			errs = append(errs, admit(&typed)...)
		}
		if len(errs) > 0 {
			return fieldErrors(errs)
		}
		*list(set) = append(*list(set), typed)
		return nil
	}}
}

// decodeStrict decodes obj into typed in two passes, as decodeProfile in
// pkg/cloudprovider/sim does: the unstructured converter names unknown
// fields by path and matches keys case-sensitively, but its type errors
// do not say where ("unrecognized type: int32"); encoding/json's do.
func decodeStrict[T any](obj map[string]any, typed *T) error {
	err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(obj, typed, true)
	if err == nil || runtime.IsStrictDecodingError(err) {
		return err
	}
	data, jerr := json.Marshal(obj)
	if jerr != nil {
		return err
	}
	var again T
	if jerr := json.Unmarshal(data, &again); jerr != nil {
		return jerr
	}
	return err
}

// builtinKinds are the built-in kinds simulate models, by the one
// apiVersion it reads for each.
func builtinKinds() map[schema.GroupVersionKind]builtinKind {
	subdomain := apivalidation.NameIsDNSSubdomain
	return map[schema.GroupVersionKind]builtinKind{
		corev1.SchemeGroupVersion.WithKind("Namespace"): builtin(false, apivalidation.ValidateNamespaceName,
			func(s *Set) *[]corev1.Namespace { return &s.Namespaces }, nil),
		corev1.SchemeGroupVersion.WithKind("Pod"): builtin(true, subdomain,
			func(s *Set) *[]corev1.Pod { return &s.Pods }, func(p *corev1.Pod) field.ErrorList {
				DefaultRequests(&p.Spec)
				return admission.Pod(p)
			}),
		corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim"): builtin(true, subdomain,
			func(s *Set) *[]corev1.PersistentVolumeClaim { return &s.PersistentVolumeClaims }, admitPersistentVolumeClaim),
		corev1.SchemeGroupVersion.WithKind("PersistentVolume"): builtin(false, subdomain,
			func(s *Set) *[]corev1.PersistentVolume { return &s.PersistentVolumes }, admitPersistentVolume),
		corev1.SchemeGroupVersion.WithKind("PodTemplate"): builtin(true, subdomain,
			func(s *Set) *[]corev1.PodTemplate { return &s.PodTemplates }, func(pt *corev1.PodTemplate) field.ErrorList {
				DefaultRequests(&pt.Template.Spec)
				return admission.PodSpec(&pt.Template.Spec, field.NewPath("template", "spec"))
			}),
		appsv1.SchemeGroupVersion.WithKind("Deployment"): builtin(true, subdomain,
			func(s *Set) *[]appsv1.Deployment { return &s.Deployments }, admission.Deployment),
		appsv1.SchemeGroupVersion.WithKind("ReplicaSet"): builtin(true, subdomain,
			func(s *Set) *[]appsv1.ReplicaSet { return &s.ReplicaSets }, admission.ReplicaSet),
		// StatefulSet names are labels: they prefix pod names and hostnames.
		appsv1.SchemeGroupVersion.WithKind("StatefulSet"): builtin(true, apivalidation.NameIsDNSLabel,
			func(s *Set) *[]appsv1.StatefulSet { return &s.StatefulSets }, admission.StatefulSet),
		appsv1.SchemeGroupVersion.WithKind("DaemonSet"): builtin(true, subdomain,
			func(s *Set) *[]appsv1.DaemonSet { return &s.DaemonSets }, admission.DaemonSet),
		batchv1.SchemeGroupVersion.WithKind("Job"): builtin(true, subdomain,
			func(s *Set) *[]batchv1.Job { return &s.Jobs }, admission.Job),
		policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget"): builtin(true, subdomain,
			func(s *Set) *[]policyv1.PodDisruptionBudget { return &s.PodDisruptionBudgets }, admission.PodDisruptionBudget),
		storagev1.SchemeGroupVersion.WithKind("StorageClass"): builtin(false, subdomain,
			func(s *Set) *[]storagev1.StorageClass { return &s.StorageClasses }, func(sc *storagev1.StorageClass) field.ErrorList {
				if sc.Provisioner == "" {
					return field.ErrorList{field.Required(field.NewPath("provisioner"), "")}
				}
				return nil
			}),
	}
}

// DefaultRequests sets each container's missing requests to its limits,
// as the API server does when a Pod is created (not in templates: their
// pods get it when created), since the scheduler and simulate read
// requests.
func DefaultRequests(spec *corev1.PodSpec) {
	for _, containers := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range containers {
			r := &containers[i].Resources
			for name, limit := range r.Limits {
				if _, ok := r.Requests[name]; !ok {
					if r.Requests == nil {
						r.Requests = corev1.ResourceList{}
					}
					r.Requests[name] = limit.DeepCopy()
				}
			}
		}
	}
}

func admitPersistentVolumeClaim(pvc *corev1.PersistentVolumeClaim) field.ErrorList {
	if _, ok := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; !ok {
		return field.ErrorList{field.Required(field.NewPath("spec", "resources", "requests").Key(string(corev1.ResourceStorage)), "")}
	}
	return nil
}

func admitPersistentVolume(pv *corev1.PersistentVolume) field.ErrorList {
	if _, ok := pv.Spec.Capacity[corev1.ResourceStorage]; !ok {
		return field.ErrorList{field.Required(field.NewPath("spec", "capacity").Key(string(corev1.ResourceStorage)), "")}
	}
	return nil
}
