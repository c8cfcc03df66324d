package buffers

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	v1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	autoscalingv1beta1 "github.com/capstan-dev/capstan/api/autoscaling/v1beta1"
	"github.com/capstan-dev/capstan/pkg/state"
)

var now = time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC)

// chunk is a pod template requesting cpu and memory.
func chunk(cpu, memory string) *corev1.PodTemplateSpec {
	return &corev1.PodTemplateSpec{
		ObjectMeta: v1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory),
		}}}}},
	}
}

func scalable(mods ...func(*autoscalingv1beta1.CapacityBufferSpec)) *autoscalingv1beta1.CapacityBuffer {
	cb := &autoscalingv1beta1.CapacityBuffer{ObjectMeta: v1.ObjectMeta{Name: "warm", Namespace: "team", Generation: 3},
		Spec: autoscalingv1beta1.CapacityBufferSpec{ScalableRef: &autoscalingv1beta1.ScalableRef{APIGroup: "apps", Kind: "Deployment", Name: "web"}}}
	for _, m := range mods {
		m(&cb.Spec)
	}
	return cb
}

func templated(mods ...func(*autoscalingv1beta1.CapacityBufferSpec)) *autoscalingv1beta1.CapacityBuffer {
	cb := scalable(mods...)
	cb.Spec.ScalableRef, cb.Spec.PodTemplateRef = nil, &autoscalingv1beta1.LocalObjectRef{Name: "chunk"}
	return cb
}

func replicas(n int32) func(*autoscalingv1beta1.CapacityBufferSpec) {
	return func(s *autoscalingv1beta1.CapacityBufferSpec) { s.Replicas = ptr.To(n) }
}

func percentage(n int32) func(*autoscalingv1beta1.CapacityBufferSpec) {
	return func(s *autoscalingv1beta1.CapacityBufferSpec) { s.Percentage = ptr.To(n) }
}

func limits(kv ...string) func(*autoscalingv1beta1.CapacityBufferSpec) {
	return func(s *autoscalingv1beta1.CapacityBufferSpec) {
		s.Limits = autoscalingv1beta1.Limits{}
		for i := 0; i < len(kv); i += 2 {
			s.Limits[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
		}
	}
}

// Expected replicas follow the reference's helpers and their tests
// (pkg/controllers/capacitybuffer/helpers.go, controller.go, v1.14.1):
// the larger of replicas and percentage, capped by limits; percentage
// rounded up to at least 1; limits alone as many whole chunks as fit.
func TestReplicas(t *testing.T) {
	for _, tc := range []struct {
		name   string
		buffer *autoscalingv1beta1.CapacityBuffer
		scale  int32
		want   int32
	}{
		{"replicas", templated(replicas(5)), 0, 5},
		{"zero replicas", templated(replicas(0)), 0, 0},
		{"percentage of the scalable object", scalable(percentage(20)), 10, 2},
		{"percentage rounds up", scalable(percentage(25)), 10, 3},
		{"a small percentage is at least 1", scalable(percentage(1)), 3, 1},
		{"zero percent is none", scalable(percentage(0)), 10, 0},
		{"percentage of a scaled-down object is none", scalable(percentage(50)), 0, 0},
		{"percentage needs a scalableRef", templated(percentage(50), replicas(1)), 10, 1},
		{"replicas and percentage: the larger", scalable(percentage(20), replicas(5)), 10, 5},
		{"percentage and replicas: the larger", scalable(percentage(80), replicas(5)), 10, 8},
		{"limits alone: whole chunks that fit", templated(limits("cpu", "10", "memory", "40Gi")), 0, 5},
		{"limits alone: the scarcest resource", templated(limits("cpu", "10", "memory", "9Gi")), 0, 2},
		{"limits cap replicas", templated(replicas(8), limits("cpu", "7")), 0, 3},
		{"limits above replicas leave them", templated(replicas(2), limits("cpu", "100")), 0, 2},
		{"limits cap percentage", scalable(percentage(100), limits("memory", "16Gi")), 10, 4},
		{"limits on a resource the chunk does not request bound nothing", templated(replicas(4), limits("nvidia.com/gpu", "1")), 0, 4},
		{"limits smaller than one chunk", templated(limits("cpu", "1")), 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := Source{Template: chunk("2", "4Gi"), ScaleReplicas: tc.scale}
			if got := Replicas(tc.buffer, src); got != tc.want {
				t.Errorf("replicas %d, want %d", got, tc.want)
			}
		})
	}
}

// condition is a condition without its time, for comparing.
type condition struct {
	Type, Status, Reason string
	Generation           int64
}

func conditions(cs []v1.Condition) []condition {
	var out []condition
	for _, c := range cs {
		out = append(out, condition{c.Type, string(c.Status), c.Reason, c.ObservedGeneration})
	}
	return out
}

func TestSize(t *testing.T) {
	type want struct {
		Replicas   *int32
		Template   string
		Generation *int64
		Conditions []condition
		Pods       []string
	}
	resolved := condition{autoscalingv1beta1.ConditionReadyForProvisioning, "True", ReasonResolved, 3}
	for _, tc := range []struct {
		name   string
		buffer *autoscalingv1beta1.CapacityBuffer
		src    Source
		want   want
	}{
		{"a PodTemplate's chunks", templated(replicas(2)), Source{Template: chunk("1", "1Gi"), TemplateGeneration: 7},
			want{Replicas: ptr.To[int32](2), Template: "chunk", Generation: ptr.To[int64](7), Conditions: []condition{resolved}, Pods: []string{"warm-virtual-0", "warm-virtual-1"}}},
		{"a scalable object's chunks", scalable(percentage(50)), Source{Template: chunk("1", "1Gi"), ScaleReplicas: 2},
			want{Replicas: ptr.To[int32](1), Conditions: []condition{resolved}, Pods: []string{"warm-virtual-0"}}},
		{"a missing PodTemplate", templated(replicas(2)), Source{Reason: ReasonPodTemplateNotFound, Message: `podtemplates "chunk" not found`},
			want{Conditions: []condition{{autoscalingv1beta1.ConditionReadyForProvisioning, "False", ReasonPodTemplateNotFound, 3}}}},
		{"a missing scalable object", scalable(replicas(2)), Source{Reason: ReasonScalableRefNotFound, Message: `deployments.apps "web" not found`},
			want{Conditions: []condition{{autoscalingv1beta1.ConditionReadyForProvisioning, "False", ReasonScalableRefNotFound, 3}}}},
		{"an unsupported kind", scalable(replicas(2)), Source{Reason: ReasonResolutionFailed, Message: `unsupported kind "CronJob"`},
			want{Conditions: []condition{{autoscalingv1beta1.ConditionReadyForProvisioning, "False", ReasonResolutionFailed, 3}}}},
		{"neither ref", scalable(replicas(2), func(s *autoscalingv1beta1.CapacityBufferSpec) { s.ScalableRef = nil }), Source{Template: chunk("1", "1Gi")},
			want{Conditions: []condition{{autoscalingv1beta1.ConditionReadyForProvisioning, "False", ReasonResolutionFailed, 3}}}},
		{"another autoscaler's strategy", templated(replicas(2), func(s *autoscalingv1beta1.CapacityBufferSpec) { s.ProvisioningStrategy = ptr.To("example.com/standby") }), Source{Template: chunk("1", "1Gi")},
			want{Conditions: []condition{{autoscalingv1beta1.ConditionReadyForProvisioning, "False", ReasonUnsupportedStrategy, 3}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Size(Input{Buffer: tc.buffer, Source: tc.src, Now: now})
			got := want{Replicas: s.Status.Replicas, Generation: s.Status.PodTemplateGeneration, Conditions: conditions(s.Status.Conditions)}
			if s.Status.PodTemplateRef != nil {
				got.Template = s.Status.PodTemplateRef.Name
			}
			for _, p := range s.Pods {
				got.Pods = append(got.Pods, p.Name)
				if !state.Yields(&p) || p.Labels["app"] != "web" || p.Namespace != "team" {
					t.Errorf("pod %s is not the buffer's yielding virtual pod of the template: %v %v", p.Name, p.Annotations, p.Labels)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("sizing (-want +got):\n%s", diff)
			}
		})
	}
}

// A buffer's virtual pods have no claims to find: PVC-backed and
// ephemeral volumes and their mounts are dropped, others kept.
func TestSizeDropsClaims(t *testing.T) {
	tmpl := chunk("1", "1Gi")
	tmpl.Spec.Volumes = []corev1.Volume{
		{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}},
		{Name: "scratch", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}}},
		{Name: "config", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	}
	tmpl.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data"}, {Name: "scratch"}, {Name: "config"}}
	s := Size(Input{Buffer: templated(replicas(1)), Source: Source{Template: tmpl}, Now: now})
	var vols, mounts []string
	for _, v := range s.Pods[0].Spec.Volumes {
		vols = append(vols, v.Name)
	}
	for _, m := range s.Pods[0].Spec.Containers[0].VolumeMounts {
		mounts = append(mounts, m.Name)
	}
	if diff := cmp.Diff([]string{"config"}, vols); diff != "" {
		t.Errorf("volumes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"config"}, mounts); diff != "" {
		t.Errorf("mounts (-want +got):\n%s", diff)
	}
	if len(tmpl.Spec.Volumes) != 3 {
		t.Errorf("the template was modified")
	}
}

// An unchanged condition keeps its transition time; others' conditions stay.
func TestSizeKeepsTransitionTimes(t *testing.T) {
	first := Size(Input{Buffer: templated(replicas(1)), Source: Source{Template: chunk("1", "1Gi")}, Now: now})
	cb := templated(replicas(2))
	cb.Status = first.Status
	cb.Status.Conditions = append(cb.Status.Conditions, v1.Condition{Type: autoscalingv1beta1.ConditionProvisioning, Status: v1.ConditionTrue, Reason: ReasonFitsExistingCapacity})
	second := Size(Input{Buffer: cb, Source: Source{Template: chunk("1", "1Gi")}, Now: now.Add(time.Hour)})
	c := second.Status.Conditions[0]
	if !c.LastTransitionTime.Time.Equal(now) || len(second.Status.Conditions) != 2 {
		t.Errorf("conditions %+v: want ReadyForProvisioning from %s and Provisioning kept", second.Status.Conditions, now)
	}
}
