package flavors

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestWithResources(t *testing.T) {
	list := res
	container := func(name string, requests, limits corev1.ResourceList) corev1.Container {
		return corev1.Container{Name: name, Resources: corev1.ResourceRequirements{Requests: requests, Limits: limits}}
	}
	pod := func(cs ...corev1.Container) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{Containers: cs}}
	}
	twoGPUs := &Flavor{Name: "a100", Requests: list("nvidia.com/gpu", "2")}
	for _, tc := range []struct {
		name   string
		pod    *corev1.Pod
		flavor *Flavor
		want   []corev1.Container
	}{{
		name:   "the model-runner container's request and limit are replaced, other resources kept",
		pod:    pod(container("sidecar", list("cpu", "100m"), nil), container(ModelRunnerContainerName, list("cpu", "1", "nvidia.com/gpu", "1"), list("nvidia.com/gpu", "1", "memory", "8Gi"))),
		flavor: twoGPUs,
		want:   []corev1.Container{container("sidecar", list("cpu", "100m"), nil), container(ModelRunnerContainerName, list("cpu", "1", "nvidia.com/gpu", "2"), list("nvidia.com/gpu", "2", "memory", "8Gi"))},
	}, {
		name:   "a container without resources gets both",
		pod:    pod(container(ModelRunnerContainerName, nil, nil)),
		flavor: twoGPUs,
		want:   []corev1.Container{container(ModelRunnerContainerName, list("nvidia.com/gpu", "2"), list("nvidia.com/gpu", "2"))},
	}, {
		name:   "a lower flavor lowers the request",
		pod:    pod(container(ModelRunnerContainerName, list("nvidia.com/gpu", "2"), list("nvidia.com/gpu", "2"))),
		flavor: &Flavor{Name: "t4", Requests: list("nvidia.com/gpu", "1")},
		want:   []corev1.Container{container(ModelRunnerContainerName, list("nvidia.com/gpu", "1"), list("nvidia.com/gpu", "1"))},
	}, {
		name:   "without a model-runner container, the first",
		pod:    pod(container("server", list("cpu", "1"), nil), container("proxy", nil, nil)),
		flavor: twoGPUs,
		want:   []corev1.Container{container("server", list("cpu", "1", "nvidia.com/gpu", "2"), list("nvidia.com/gpu", "2")), container("proxy", nil, nil)},
	}, {
		name:   "a flavor without resources leaves the pod",
		pod:    pod(container(ModelRunnerContainerName, list("cpu", "1"), nil)),
		flavor: &Flavor{Name: "any"},
		want:   []corev1.Container{container(ModelRunnerContainerName, list("cpu", "1"), nil)},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.pod.DeepCopy()
			got := WithResources(tc.pod, tc.flavor)
			if diff := cmp.Diff(tc.want, got.Spec.Containers, quantityEqual()); diff != "" {
				t.Errorf("containers (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, tc.pod, quantityEqual()); diff != "" {
				t.Errorf("the pod changed (-before +after):\n%s", diff)
			}
		})
	}
}

func TestNeeds(t *testing.T) {
	f := &Flavor{Name: "a100", Requests: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("2"), "memory": resource.MustParse("16Gi")}}
	if got, want := Needs(f), "16Gi memory, 2 nvidia.com/gpu"; got != want {
		t.Errorf("Needs = %q, want %q", got, want)
	}
	if got := Needs(&Flavor{Name: "any"}); got != "" {
		t.Errorf("Needs without resources = %q", got)
	}
}

func TestCheckResources(t *testing.T) {
	for _, tc := range []struct {
		name string
		list corev1.ResourceList
		want string
	}{
		{"valid", corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1"), "cpu": resource.MustParse("0")}, ""},
		{"negative", corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("-1")}, "nvidia.com/gpu quantity -1 is negative"},
		{"not a resource name", corev1.ResourceList{"nvidia.com/gpu count": resource.MustParse("1")}, `"nvidia.com/gpu count" is not a resource name: `},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkResources(tc.list)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if tc.want == "" && got != "" || tc.want != "" && !strings.HasPrefix(got, tc.want) {
				t.Errorf("checkResources = %q, want %q", got, tc.want)
			}
		})
	}
}
