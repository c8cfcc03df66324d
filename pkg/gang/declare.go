package gang

import (
	"fmt"
	"math"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The group objects a gang's min count is read from. The Workload API's
// PodGroup is served as scheduling.k8s.io/v1alpha3 and, from Kubernetes
// 1.37 (gate GenericWorkload, beta, off by default), v1beta1, which
// kube-scheduler's GangScheduling plugin reads; scheduler-plugins'
// PodGroup is a CRD whose Go module is not published, so both are read
// from unstructured objects.
var (
	WorkloadPodGroupV1beta1  = schema.GroupVersionKind{Group: "scheduling.k8s.io", Version: "v1beta1", Kind: "PodGroup"}
	WorkloadPodGroupV1alpha3 = schema.GroupVersionKind{Group: "scheduling.k8s.io", Version: "v1alpha3", Kind: "PodGroup"}
	PluginPodGroup           = schema.GroupVersionKind{Group: "scheduling.x-k8s.io", Version: "v1alpha1", Kind: "PodGroup"}
)

// notAGang is the min count of a group its object declares without an
// all-or-nothing policy (a Workload API PodGroup with the basic policy):
// its pods are placed one by one.
const notAGang = 0

// Declare reads the min counts group objects declare: a Workload API
// PodGroup's spec.schedulingPolicy.gang.minCount (a PodGroup without a
// gang policy is no gang), scheduler-plugins' spec.minMember (its CRD's
// minimum, 1, when unset). Objects of other kinds are skipped; an object
// whose count is not a positive integer is reported and left out, so its
// members fall back to all of them.
func Declare(objs []unstructured.Unstructured) (Declared, []error) {
	declared := Declared{}
	var errs []error
	for i := range objs {
		o := &objs[i]
		key, n, err := declaredBy(o)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("reading %s %s/%s, %w", o.GetKind(), o.GetNamespace(), o.GetName(), err))
		case key != "":
			declared[key] = n
		}
	}
	return declared, errs
}

// declaredBy is the key and min count one object declares; "" for an
// object of another kind.
func declaredBy(o *unstructured.Unstructured) (string, int, error) {
	var (
		key  string
		path []string
		// unset is the count when the field is absent; -1: required.
		unset int64 = -1
	)
	switch o.GroupVersionKind() {
	case WorkloadPodGroupV1beta1, WorkloadPodGroupV1alpha3:
		key = WorkloadKey(o.GetNamespace(), o.GetName())
		if _, ok, _ := unstructured.NestedMap(o.Object, "spec", "schedulingPolicy", "gang"); !ok {
			return key, notAGang, nil
		}
		path = []string{"spec", "schedulingPolicy", "gang", "minCount"}
	case PluginPodGroup:
		key, path, unset = PluginKey(o.GetNamespace(), o.GetName()), []string{"spec", "minMember"}, 1
	default:
		return "", 0, nil
	}
	n, ok, err := integer(o.Object, path)
	if err != nil {
		return "", 0, err
	}
	if !ok {
		n = unset
	}
	if n < 1 {
		return "", 0, fmt.Errorf("min count %d at %s is not a positive integer", n, strings.Join(path, "."))
	}
	return key, int(n), nil
}

// integer is the whole number at path: int64 as the API server's objects
// decode, float64 as YAML manifests do.
func integer(obj map[string]any, path []string) (int64, bool, error) {
	v, ok, err := unstructured.NestedFieldNoCopy(obj, path...)
	if err != nil || !ok {
		return 0, ok, err
	}
	switch n := v.(type) {
	case int64:
		return n, true, nil
	case float64:
		if n == math.Trunc(n) {
			return int64(n), true, nil
		}
	}
	return 0, false, fmt.Errorf("%s is %v, not an integer", strings.Join(path, "."), v)
}
