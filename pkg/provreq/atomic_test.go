package provreq_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	autoscalingv1 "k8s.io/autoscaler/cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/gang"
	"github.com/capstan-dev/capstan/pkg/provreq"
	"github.com/capstan-dev/capstan/pkg/scaleup"
	"github.com/capstan-dev/capstan/pkg/state"
	"github.com/capstan-dev/capstan/pkg/test"
)

// An atomic request's virtual pods go through the provisioner's one
// solve (scaleup.Decide): NodeClaims for all of them, each carrying the
// request's atomic group, or none at all.
func TestAtomicRequestLaunchesAllOrNone(t *testing.T) {
	for _, tc := range []struct {
		name       string
		count      int32
		wantClaims int
	}{
		{name: "two 3-core pods fit the 8-core limit: two NodeClaims", count: 2, wantClaims: 2},
		{name: "three do not: none", count: 3, wantClaims: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pr := autoscalingv1.ProvisioningRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job"}}
			pr.Spec.ProvisioningClassName = autoscalingv1.ProvisioningClassBestEffortAtomicScaleUp
			pr.Spec.PodSets = []autoscalingv1.PodSet{{PodTemplateRef: autoscalingv1.Reference{Name: "workers"}, Count: tc.count}}
			tmpl := corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "workers"}}
			tmpl.Template.Spec.Containers = []corev1.Container{{Name: "w", Image: "w", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")},
			}}}
			virtual := provreq.VirtualPods(provreq.Requests(provreq.Objects{Requests: []autoscalingv1.ProvisioningRequest{pr}, Templates: []corev1.PodTemplate{tmpl}}))
			np := test.NodePool(func(np *v1.NodePool) {
				np.Name = "default"
				np.Spec.Limits = v1.Limits{corev1.ResourceCPU: resource.MustParse("8")}
			})
			its := []*cloudprovider.InstanceType{test.InstanceType(test.InstanceTypeOptions{Name: "c.xlarge", CPU: 4, Memory: 16})}
			snap := state.Build(state.Objects{NodePools: []v1.NodePool{*np}, VirtualPods: virtual},
				map[string][]*cloudprovider.InstanceType{"default": its}, []string{corev1.DefaultSchedulerName})
			d := scaleup.Decide(snap, scaleup.Options{}, func(string) string { return test.RandomName("default") })
			if len(d.NodeClaims) != tc.wantClaims {
				t.Fatalf("%d NodeClaims, want %d", len(d.NodeClaims), tc.wantClaims)
			}
			for _, nc := range d.NodeClaims {
				if got := nc.Annotations[gang.AtomicGroupAnnotationKey]; got != "ProvisioningRequest/ns/job" {
					t.Errorf("NodeClaim %s: atomic group %q", nc.Name, got)
				}
			}
		})
	}
}
