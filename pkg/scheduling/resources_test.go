package scheduling

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

const (
	gpu      corev1.ResourceName = "nvidia.com/gpu"
	fpga     corev1.ResourceName = "example.com/fpga"
	nic      corev1.ResourceName = "example.com/nic"
	hugepage corev1.ResourceName = "hugepages-2Mi"
)

// quantityEqual compares Quantities by value, not by representation.
var quantityEqual = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

func rl(pairs ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(pairs); i += 2 {
		out[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return out
}

func TestNewResources(t *testing.T) {
	cases := []struct {
		name string
		in   corev1.ResourceList
		want Resources
	}{
		{name: "empty list is zero with nil extended", in: corev1.ResourceList{}, want: Resources{}},
		{
			name: "cpu in millicores, memory and storage in bytes, pods as a count",
			in:   rl("cpu", "1500m", "memory", "1Gi", "ephemeral-storage", "10G", "pods", "110"),
			want: Resources{CPU: 1500, Memory: 1 << 30, Storage: 10_000_000_000, Pods: 110},
		},
		{name: "whole cores become millicores", in: rl("cpu", "2"), want: Resources{CPU: 2000}},
		{name: "fractions of a millicore round up", in: rl("cpu", "0.1m"), want: Resources{CPU: 1}},
		{name: "fractions of a byte round up", in: rl("memory", "500m"), want: Resources{Memory: 1}},
		{
			name: "extended resources sorted by name",
			in:   rl(string(gpu), "2", string(nic), "4", string(fpga), "1"),
			want: Resources{Extended: []Extended{{fpga, 1}, {nic, 4}, {gpu, 2}}},
		},
		{
			name: "zero extended resources dropped",
			in:   rl(string(gpu), "0", string(fpga), "1"),
			want: Resources{Extended: []Extended{{fpga, 1}}},
		},
		{
			name: "only zero extended resources leaves extended nil",
			in:   rl(string(gpu), "0", "cpu", "1"),
			want: Resources{CPU: 1000},
		},
		{
			name: "hugepages kept as an extended resource in bytes",
			in:   rl(string(hugepage), "4Mi", "memory", "1Gi"),
			want: Resources{Memory: 1 << 30, Extended: []Extended{{hugepage, 4 << 20}}},
		},
		{
			name: "zero core resources are zero",
			in:   rl("cpu", "0", "memory", "0"),
			want: Resources{},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, NewResources(tc.in)); diff != "" {
				t.Errorf("NewResources(%v) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

func container(name string, requests corev1.ResourceList) corev1.Container {
	return corev1.Container{Name: name, Resources: corev1.ResourceRequirements{Requests: requests}}
}

func sidecar(name string, requests corev1.ResourceList) corev1.Container {
	c := container(name, requests)
	c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
	return c
}

func TestPodRequests(t *testing.T) {
	cases := []struct {
		name string
		spec corev1.PodSpec
		want Resources
	}{
		{name: "empty pod still takes a pod slot", want: Resources{Pods: 1}},
		{
			name: "containers are summed",
			spec: corev1.PodSpec{Containers: []corev1.Container{
				container("a", rl("cpu", "100m", "memory", "64Mi")),
				container("b", rl("cpu", "200m", "memory", "128Mi")),
			}},
			want: Resources{CPU: 300, Memory: 192 << 20, Pods: 1},
		},
		{
			name: "an init container above the containers' sum sets the request, per resource",
			spec: corev1.PodSpec{
				InitContainers: []corev1.Container{container("init", rl("cpu", "500m", "memory", "32Mi"))},
				Containers: []corev1.Container{
					container("a", rl("cpu", "100m", "memory", "64Mi")),
					container("b", rl("cpu", "200m", "memory", "128Mi")),
				},
			},
			want: Resources{CPU: 500, Memory: 192 << 20, Pods: 1},
		},
		{
			name: "regular init containers count by their peak, not their sum",
			spec: corev1.PodSpec{
				InitContainers: []corev1.Container{
					container("init1", rl("cpu", "400m")),
					container("init2", rl("cpu", "400m")),
				},
				Containers: []corev1.Container{container("a", rl("cpu", "300m"))},
			},
			want: Resources{CPU: 400, Pods: 1},
		},
		{
			name: "a sidecar init container is added to the containers' sum",
			spec: corev1.PodSpec{
				InitContainers: []corev1.Container{sidecar("proxy", rl("cpu", "100m", "memory", "16Mi"))},
				Containers:     []corev1.Container{container("a", rl("cpu", "200m", "memory", "64Mi"))},
			},
			want: Resources{CPU: 300, Memory: 80 << 20, Pods: 1},
		},
		{
			name: "a regular init container after a sidecar runs alongside it",
			spec: corev1.PodSpec{
				InitContainers: []corev1.Container{
					sidecar("proxy", rl("cpu", "100m")),
					container("migrate", rl("cpu", "350m")),
				},
				Containers: []corev1.Container{container("a", rl("cpu", "200m"))},
			},
			want: Resources{CPU: 450, Pods: 1},
		},
		{
			name: "a regular init container before a sidecar runs alone",
			spec: corev1.PodSpec{
				InitContainers: []corev1.Container{
					container("migrate", rl("cpu", "350m")),
					sidecar("proxy", rl("cpu", "100m")),
				},
				Containers: []corev1.Container{container("a", rl("cpu", "200m"))},
			},
			want: Resources{CPU: 350, Pods: 1},
		},
		{
			name: "pod overhead is added",
			spec: corev1.PodSpec{
				Overhead:   rl("cpu", "50m", "memory", "10Mi"),
				Containers: []corev1.Container{container("a", rl("cpu", "100m", "memory", "64Mi"))},
			},
			want: Resources{CPU: 150, Memory: 74 << 20, Pods: 1},
		},
		{
			name: "pod overhead is added on top of an init container peak",
			spec: corev1.PodSpec{
				Overhead:       rl("cpu", "50m"),
				InitContainers: []corev1.Container{container("init", rl("cpu", "1"))},
				Containers:     []corev1.Container{container("a", rl("cpu", "100m"))},
			},
			want: Resources{CPU: 1050, Pods: 1},
		},
		{
			name: "extended requests are summed and sorted",
			spec: corev1.PodSpec{Containers: []corev1.Container{
				container("a", rl(string(gpu), "1", string(hugepage), "2Mi")),
				container("b", rl(string(gpu), "2")),
			}},
			want: Resources{Pods: 1, Extended: []Extended{{hugepage, 2 << 20}, {gpu, 3}}},
		},
		{
			name: "a pods request in a container does not change the one slot",
			spec: corev1.PodSpec{Containers: []corev1.Container{container("a", rl("pods", "5"))}},
			want: Resources{Pods: 1},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: tc.spec}
			if diff := cmp.Diff(tc.want, PodRequests(pod)); diff != "" {
				t.Errorf("PodRequests (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAddSub(t *testing.T) {
	cases := []struct {
		name    string
		a, b    Resources
		wantAdd Resources
		wantSub Resources
	}{
		{name: "zero", wantAdd: Resources{}, wantSub: Resources{}},
		{
			name:    "core amounts, going negative",
			a:       Resources{CPU: 1000, Memory: 100, Storage: 10, Pods: 1},
			b:       Resources{CPU: 1500, Memory: 40, Storage: 10, Pods: 2},
			wantAdd: Resources{CPU: 2500, Memory: 140, Storage: 20, Pods: 3},
			wantSub: Resources{CPU: -500, Memory: 60, Storage: 0, Pods: -1},
		},
		{
			name:    "disjoint extended names merge in order",
			a:       Resources{Extended: []Extended{{fpga, 1}, {gpu, 4}}},
			b:       Resources{Extended: []Extended{{nic, 2}}},
			wantAdd: Resources{Extended: []Extended{{fpga, 1}, {nic, 2}, {gpu, 4}}},
			wantSub: Resources{Extended: []Extended{{fpga, 1}, {nic, -2}, {gpu, 4}}},
		},
		{
			name:    "overlapping extended names combine",
			a:       Resources{Extended: []Extended{{fpga, 3}, {gpu, 1}}},
			b:       Resources{Extended: []Extended{{fpga, 1}, {nic, 2}, {gpu, 3}}},
			wantAdd: Resources{Extended: []Extended{{fpga, 4}, {nic, 2}, {gpu, 4}}},
			wantSub: Resources{Extended: []Extended{{fpga, 2}, {nic, -2}, {gpu, -2}}},
		},
		{
			name:    "only the left side has extended",
			a:       Resources{CPU: 1, Extended: []Extended{{gpu, 2}}},
			b:       Resources{CPU: 1},
			wantAdd: Resources{CPU: 2, Extended: []Extended{{gpu, 2}}},
			wantSub: Resources{CPU: 0, Extended: []Extended{{gpu, 2}}},
		},
		{
			name:    "only the right side has extended: subtracting negates it",
			a:       Resources{CPU: 1},
			b:       Resources{Extended: []Extended{{fpga, 1}, {gpu, 2}}},
			wantAdd: Resources{CPU: 1, Extended: []Extended{{fpga, 1}, {gpu, 2}}},
			wantSub: Resources{CPU: 1, Extended: []Extended{{fpga, -1}, {gpu, -2}}},
		},
		{
			name:    "equal extended amounts subtract to zero entries",
			a:       Resources{Extended: []Extended{{gpu, 2}}},
			b:       Resources{Extended: []Extended{{gpu, 2}}},
			wantAdd: Resources{Extended: []Extended{{gpu, 4}}},
			wantSub: Resources{Extended: []Extended{{gpu, 0}}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			aBefore, bBefore := clone(tc.a), clone(tc.b)
			if diff := cmp.Diff(tc.wantAdd, tc.a.Add(tc.b)); diff != "" {
				t.Errorf("Add (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantSub, tc.a.Sub(tc.b)); diff != "" {
				t.Errorf("Sub (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantAdd, tc.b.Add(tc.a)); diff != "" {
				t.Errorf("Add is not commutative (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(aBefore, tc.a); diff != "" {
				t.Errorf("left operand changed (-before +after):\n%s", diff)
			}
			if diff := cmp.Diff(bBefore, tc.b); diff != "" {
				t.Errorf("right operand changed (-before +after):\n%s", diff)
			}
		})
	}
}

func clone(r Resources) Resources {
	r.Extended = slices.Clone(r.Extended)
	return r
}

func TestFitsAndExceeded(t *testing.T) {
	capacity := Resources{CPU: 2000, Memory: 4 << 30, Storage: 20 << 30, Pods: 10, Extended: []Extended{{fpga, 1}, {gpu, 2}}}
	cases := []struct {
		name         string
		request      Resources
		capacity     Resources
		wantFits     bool
		wantExceeded []corev1.ResourceName
	}{
		{name: "zero request fits zero capacity", capacity: Resources{}, wantFits: true},
		{name: "exactly the capacity fits", request: capacity, capacity: capacity, wantFits: true},
		{name: "less fits", request: Resources{CPU: 1, Memory: 1, Pods: 1}, capacity: capacity, wantFits: true},
		{name: "cpu over", request: Resources{CPU: 2001}, capacity: capacity, wantExceeded: []corev1.ResourceName{corev1.ResourceCPU}},
		{name: "memory over", request: Resources{Memory: 4<<30 + 1}, capacity: capacity, wantExceeded: []corev1.ResourceName{corev1.ResourceMemory}},
		{name: "storage over", request: Resources{Storage: 21 << 30}, capacity: capacity, wantExceeded: []corev1.ResourceName{corev1.ResourceEphemeralStorage}},
		{name: "pods over", request: Resources{Pods: 11}, capacity: capacity, wantExceeded: []corev1.ResourceName{corev1.ResourcePods}},
		{
			name:         "several over, all named",
			request:      Resources{CPU: 3000, Pods: 11, Extended: []Extended{{gpu, 3}}},
			capacity:     capacity,
			wantExceeded: []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourcePods, gpu},
		},
		{name: "extended equal to capacity fits", request: Resources{Extended: []Extended{{gpu, 2}}}, capacity: capacity, wantFits: true},
		{
			name:         "extended above capacity",
			request:      Resources{Extended: []Extended{{gpu, 3}}},
			capacity:     capacity,
			wantExceeded: []corev1.ResourceName{gpu},
		},
		{
			name:         "extended missing on capacity",
			request:      Resources{Extended: []Extended{{nic, 1}}},
			capacity:     capacity,
			wantExceeded: []corev1.ResourceName{nic},
		},
		{
			name:         "extended missing on capacity without any extended",
			request:      Resources{Extended: []Extended{{gpu, 1}}},
			capacity:     Resources{CPU: 1000},
			wantExceeded: []corev1.ResourceName{gpu},
		},
		{
			name:         "one extended missing among present ones",
			request:      Resources{Extended: []Extended{{fpga, 1}, {nic, 1}, {gpu, 1}}},
			capacity:     capacity,
			wantExceeded: []corev1.ResourceName{nic},
		},
		{
			name:     "several extended, capacity with names in between",
			request:  Resources{Extended: []Extended{{fpga, 1}, {gpu, 2}}},
			capacity: Resources{Extended: []Extended{{fpga, 1}, {nic, 8}, {gpu, 2}}},
			wantFits: true,
		},
		{
			name:     "extended the request lacks are not needed",
			request:  Resources{CPU: 100},
			capacity: capacity,
			wantFits: true,
		},
		{
			name:     "zero extended in the request ignored though capacity lacks it",
			request:  Resources{Extended: []Extended{{nic, 0}}},
			capacity: capacity,
			wantFits: true,
		},
		{
			name:     "negative extended in the request ignored",
			request:  Resources{Extended: []Extended{{nic, -1}, {gpu, -5}}},
			capacity: capacity,
			wantFits: true,
		},
		{
			name:     "zero extended in the request ignored against overdrawn capacity",
			request:  Resources{Extended: []Extended{{gpu, 0}}},
			capacity: Resources{Extended: []Extended{{gpu, -1}}},
			wantFits: true,
		},
		{
			name:         "overdrawn capacity fits no positive request",
			request:      Resources{CPU: 1},
			capacity:     Resources{CPU: -100},
			wantExceeded: []corev1.ResourceName{corev1.ResourceCPU},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.request.Fits(tc.capacity); got != tc.wantFits {
				t.Errorf("Fits = %v, want %v", got, tc.wantFits)
			}
			if diff := cmp.Diff(tc.wantExceeded, tc.request.Exceeded(tc.capacity)); diff != "" {
				t.Errorf("Exceeded (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFitsDoesNotAllocate(t *testing.T) {
	request := Resources{CPU: 100, Memory: 1 << 20, Pods: 1, Extended: []Extended{{fpga, 1}, {gpu, 1}}}
	capacity := Resources{CPU: 1000, Memory: 1 << 30, Pods: 10, Extended: []Extended{{fpga, 1}, {nic, 2}, {gpu, 4}}}
	if !request.Fits(capacity) {
		t.Fatal("request does not fit; the allocation check would test the wrong path")
	}
	if allocs := testing.AllocsPerRun(100, func() { request.Fits(capacity) }); allocs != 0 {
		t.Errorf("Fits allocates %v times", allocs)
	}
}

func TestMax(t *testing.T) {
	cases := []struct {
		name string
		a, b Resources
		want Resources
	}{
		{name: "zero", want: Resources{}},
		{
			name: "componentwise",
			a:    Resources{CPU: 1000, Memory: 2, Storage: 5, Pods: 1},
			b:    Resources{CPU: 500, Memory: 3, Storage: 5, Pods: 2},
			want: Resources{CPU: 1000, Memory: 3, Storage: 5, Pods: 2},
		},
		{
			name: "extended merged, larger amounts kept, order kept",
			a:    Resources{Extended: []Extended{{fpga, 1}, {gpu, 5}}},
			b:    Resources{Extended: []Extended{{fpga, 3}, {nic, 1}, {gpu, 2}}},
			want: Resources{Extended: []Extended{{fpga, 3}, {nic, 1}, {gpu, 5}}},
		},
		{
			name: "extended only on the right",
			b:    Resources{Extended: []Extended{{gpu, 1}}},
			want: Resources{Extended: []Extended{{gpu, 1}}},
		},
		{
			name: "negative amounts",
			a:    Resources{CPU: -5, Extended: []Extended{{gpu, -1}}},
			b:    Resources{CPU: -10},
			want: Resources{CPU: -5, Extended: []Extended{{gpu, -1}}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			aBefore, bBefore := clone(tc.a), clone(tc.b)
			if diff := cmp.Diff(tc.want, tc.a.Max(tc.b)); diff != "" {
				t.Errorf("Max (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(aBefore, tc.a); diff != "" {
				t.Errorf("Max changed its receiver (-before +after):\n%s", diff)
			}
			if diff := cmp.Diff(bBefore, tc.b); diff != "" {
				t.Errorf("Max changed its argument (-before +after):\n%s", diff)
			}
		})
	}
}

func TestGet(t *testing.T) {
	r := Resources{CPU: 1500, Memory: 2 << 30, Storage: 7, Pods: 3, Extended: []Extended{{fpga, 1}, {gpu, 4}}}
	cases := []struct {
		name corev1.ResourceName
		want int64
	}{
		{corev1.ResourceCPU, 1500},
		{corev1.ResourceMemory, 2 << 30},
		{corev1.ResourceEphemeralStorage, 7},
		{corev1.ResourcePods, 3},
		{fpga, 1},
		{gpu, 4},
		{nic, 0},
		{hugepage, 0},
	}
	for _, tc := range cases {
		if got := r.Get(tc.name); got != tc.want {
			t.Errorf("Get(%s) = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestResourceList(t *testing.T) {
	cases := []struct {
		name string
		in   Resources
		want corev1.ResourceList
	}{
		{name: "zero is empty, not nil", in: Resources{}, want: corev1.ResourceList{}},
		{
			name: "every amount in its unit",
			in:   Resources{CPU: 1500, Memory: 1 << 30, Storage: 10 << 30, Pods: 110, Extended: []Extended{{hugepage, 4 << 20}, {gpu, 2}}},
			want: rl("cpu", "1500m", "memory", "1Gi", "ephemeral-storage", "10Gi", "pods", "110", string(hugepage), "4Mi", string(gpu), "2"),
		},
		{
			name: "zero amounts left out",
			in:   Resources{CPU: 100, Extended: []Extended{{fpga, 0}, {gpu, 1}}},
			want: rl("cpu", "100m", string(gpu), "1"),
		},
		{
			name: "negative amounts kept",
			in:   Resources{CPU: -100, Extended: []Extended{{gpu, -1}}},
			want: rl("cpu", "-100m", string(gpu), "-1"),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.in.ResourceList()
			if diff := cmp.Diff(tc.want, got, quantityEqual); diff != "" {
				t.Errorf("ResourceList (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResourceListRoundTrip(t *testing.T) {
	for _, r := range []Resources{
		{},
		{CPU: 1, Memory: 1, Storage: 1, Pods: 1},
		{CPU: 1500, Memory: 3 << 30, Storage: 100 << 30, Pods: 110, Extended: []Extended{{fpga, 1}, {hugepage, 2 << 20}, {gpu, 8}}},
	} {
		if diff := cmp.Diff(r, NewResources(r.ResourceList())); diff != "" {
			t.Errorf("NewResources(r.ResourceList()) != r (-want +got):\n%s", diff)
		}
	}
	list := rl("cpu", "250m", "memory", "512Mi", "pods", "1", string(gpu), "1")
	if diff := cmp.Diff(list, NewResources(list).ResourceList(), quantityEqual); diff != "" {
		t.Errorf("NewResources(list).ResourceList() != list (-want +got):\n%s", diff)
	}
}
