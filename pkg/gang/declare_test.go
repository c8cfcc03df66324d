package gang

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func TestDeclare(t *testing.T) {
	objs := func(docs ...string) []unstructured.Unstructured {
		var out []unstructured.Unstructured
		for _, d := range docs {
			var u unstructured.Unstructured
			if err := yaml.Unmarshal([]byte(d), &u.Object); err != nil {
				t.Fatal(err)
			}
			out = append(out, u)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		objs []unstructured.Unstructured
		want Declared
		errs int
	}{
		{
			name: "the Workload API's gang policy, in both served versions",
			objs: objs(
				`{apiVersion: scheduling.k8s.io/v1beta1, kind: PodGroup, metadata: {namespace: ml, name: a}, spec: {schedulingPolicy: {gang: {minCount: 6}}}}`,
				`{apiVersion: scheduling.k8s.io/v1alpha3, kind: PodGroup, metadata: {namespace: ml, name: b}, spec: {schedulingPolicy: {gang: {minCount: 2}}}}`,
			),
			want: Declared{"scheduling.k8s.io/PodGroup/ml/a": 6, "scheduling.k8s.io/PodGroup/ml/b": 2},
		},
		{
			name: "the basic policy is no gang",
			objs: objs(`{apiVersion: scheduling.k8s.io/v1beta1, kind: PodGroup, metadata: {namespace: ml, name: a}, spec: {schedulingPolicy: {basic: {}}}}`),
			want: Declared{"scheduling.k8s.io/PodGroup/ml/a": 0},
		},
		{
			name: "scheduler-plugins' minMember, 1 when unset as its CRD's minimum",
			objs: objs(
				`{apiVersion: scheduling.x-k8s.io/v1alpha1, kind: PodGroup, metadata: {namespace: ml, name: a}, spec: {minMember: 3}}`,
				`{apiVersion: scheduling.x-k8s.io/v1alpha1, kind: PodGroup, metadata: {namespace: ml, name: b}, spec: {}}`,
			),
			want: Declared{"scheduling.x-k8s.io/PodGroup/ml/a": 3, "scheduling.x-k8s.io/PodGroup/ml/b": 1},
		},
		{
			name: "other kinds are skipped; a count that is not a positive integer is reported",
			objs: objs(
				`{apiVersion: v1, kind: ConfigMap, metadata: {namespace: ml, name: a}}`,
				`{apiVersion: scheduling.k8s.io/v1beta1, kind: PodGroup, metadata: {namespace: ml, name: a}, spec: {schedulingPolicy: {gang: {minCount: 0}}}}`,
				`{apiVersion: scheduling.k8s.io/v1beta1, kind: PodGroup, metadata: {namespace: ml, name: b}, spec: {schedulingPolicy: {gang: {}}}}`,
				`{apiVersion: scheduling.x-k8s.io/v1alpha1, kind: PodGroup, metadata: {namespace: ml, name: c}, spec: {minMember: "x"}}`,
			),
			want: Declared{},
			errs: 3,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, errs := Declare(tc.objs)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if len(errs) != tc.errs {
				t.Errorf("errors %v, want %d", errs, tc.errs)
			}
		})
	}
}

func TestIsGang(t *testing.T) {
	declared := Declared{"basic": 0, "gang": 3}
	for key, want := range map[string]bool{"": false, "basic": false, "gang": true, "undeclared": true} {
		if got := IsGang(key, declared); got != want {
			t.Errorf("IsGang(%q) = %v, want %v", key, got, want)
		}
	}
}
