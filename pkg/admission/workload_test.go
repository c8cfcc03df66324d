package admission

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func template(labels map[string]string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}}
}

// Each workload's pod template labels are checked as the API server
// checks them, and its selector must match them.
func TestWorkloads(t *testing.T) {
	const badValue = `a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`
	selector := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	good := map[string]string{"app": "web"}
	bad := map[string]string{"app": "web", "tier": "front end"}
	deployment := func(labels map[string]string) field.ErrorList {
		return Deployment(&appsv1.Deployment{Spec: appsv1.DeploymentSpec{Selector: selector, Template: template(labels)}})
	}
	cases := []struct {
		name string
		errs field.ErrorList
		want []string
	}{
		{"a Deployment", deployment(good), nil},
		{"a Deployment's bad template label", deployment(bad), []string{`spec.template.labels: Invalid value: "front end": ` + badValue}},
		{"a Deployment's bad template label key", deployment(map[string]string{"app": "web", "-x": "y"}),
			[]string{`spec.template.labels: Invalid value: "-x": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`}},
		{"a Deployment whose selector misses its labels", deployment(map[string]string{"app": "api"}),
			[]string{"spec.template.metadata.labels: Invalid value: {\"app\":\"api\"}: `selector` does not match template `labels`"}},
		{"a ReplicaSet", ReplicaSet(&appsv1.ReplicaSet{Spec: appsv1.ReplicaSetSpec{Selector: selector, Template: template(bad)}}),
			[]string{`spec.template.labels: Invalid value: "front end": ` + badValue}},
		{"a StatefulSet", StatefulSet(&appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Selector: selector, Template: template(bad)}}),
			[]string{`spec.template.labels: Invalid value: "front end": ` + badValue}},
		{"a DaemonSet", DaemonSet(&appsv1.DaemonSet{Spec: appsv1.DaemonSetSpec{Selector: selector, Template: template(bad)}}),
			[]string{`spec.template.labels: Invalid value: "front end": ` + badValue}},
		{"a Job", Job(&batchv1.Job{Spec: batchv1.JobSpec{Template: func() corev1.PodTemplateSpec {
			t := template(bad)
			t.Spec.RestartPolicy = corev1.RestartPolicyNever
			return t
		}()}}), []string{`spec.template.labels: Invalid value: "front end": ` + badValue}},
		{"a template annotation", Deployment(&appsv1.Deployment{Spec: appsv1.DeploymentSpec{Selector: selector, Template: func() corev1.PodTemplateSpec {
			t := template(good)
			t.Annotations = map[string]string{"bad key!": "v"}
			return t
		}()}}), []string{`spec.template.annotations: Invalid value: "bad key!": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`}},
		{"a Pod", Pod(&corev1.Pod{}), []string{"spec.containers: Required value"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, messages(tc.errs)); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}
