package manifests

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx, resources: {requests: {cpu: 500m}}}]
`
	pod = `apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  containers: [{name: a, image: nginx, resources: {limits: {cpu: "1", nvidia.com/gpu: "1"}, requests: {cpu: 100m}}}]
`
)

// Every built-in kind simulate models is read into its list, namespaced
// ones into namespace "default" unless they name one, cluster-scoped ones
// without a namespace.
func TestBuiltinKindsAreRead(t *testing.T) {
	data := strings.Join([]string{
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: team-a, namespace: ignored}\n",
		pod,
		"apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data, namespace: team-a}\nspec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n",
		"apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv}\nspec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce], hostPath: {path: /data}}\n",
		deployment,
		"apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: rs}\nspec: {selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c}]}}}\n",
		"apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\nspec: {selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c}]}}}\n",
		"apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent}\nspec: {selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c}]}}}\n",
		"apiVersion: batch/v1\nkind: Job\nmetadata: {name: once}\nspec: {template: {spec: {restartPolicy: Never, containers: [{name: c}]}}}\n",
		"apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web}\nspec: {minAvailable: 50%, selector: {matchLabels: {app: web}}}\n",
		"apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: fast}\nprovisioner: ebs.csi.aws.com\n",
	}, "---\n")
	set := &Set{}
	if err := newLoader(t).Read("all.yaml", []byte(data), set); err != nil {
		t.Fatal(err)
	}
	var got []named
	got = append(got, namesOf[corev1.Namespace]("Namespace", set.Namespaces)...)
	got = append(got, namesOf[corev1.Pod]("Pod", set.Pods)...)
	got = append(got, namesOf[corev1.PersistentVolumeClaim]("PersistentVolumeClaim", set.PersistentVolumeClaims)...)
	got = append(got, namesOf[corev1.PersistentVolume]("PersistentVolume", set.PersistentVolumes)...)
	got = append(got, namesOf[appsv1.Deployment]("Deployment", set.Deployments)...)
	got = append(got, namesOf[appsv1.ReplicaSet]("ReplicaSet", set.ReplicaSets)...)
	got = append(got, namesOf[appsv1.StatefulSet]("StatefulSet", set.StatefulSets)...)
	got = append(got, namesOf[appsv1.DaemonSet]("DaemonSet", set.DaemonSets)...)
	got = append(got, namesOf[batchv1.Job]("Job", set.Jobs)...)
	got = append(got, namesOf[policyv1.PodDisruptionBudget]("PodDisruptionBudget", set.PodDisruptionBudgets)...)
	got = append(got, namesOf[storagev1.StorageClass]("StorageClass", set.StorageClasses)...)
	want := []named{
		{"Namespace", "", "team-a"}, {"Pod", "default", "p"}, {"PersistentVolumeClaim", "team-a", "data"},
		{"PersistentVolume", "", "pv"}, {"Deployment", "default", "web"}, {"ReplicaSet", "default", "rs"},
		{"StatefulSet", "default", "db"}, {"DaemonSet", "default", "agent"}, {"Job", "default", "once"},
		{"PodDisruptionBudget", "default", "web"}, {"StorageClass", "", "fast"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("objects read (-want +got):\n%s", diff)
	}
	if got := set.Deployments[0].Spec.Template.Spec.Containers[0].Resources.Requests.Cpu().String(); got != "500m" {
		t.Errorf("deployment cpu request = %s, want 500m", got)
	}
}

// A Pod's missing requests default to its limits, as the server defaults
// them; requests it sets are kept.
func TestPodRequestsDefaultToLimits(t *testing.T) {
	set := &Set{}
	if err := newLoader(t).Read("pod.yaml", []byte(pod), set); err != nil {
		t.Fatal(err)
	}
	want := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), "nvidia.com/gpu": resource.MustParse("1")}
	if diff := cmp.Diff(want, set.Pods[0].Spec.Containers[0].Resources.Requests); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestInvalidBuiltinKinds(t *testing.T) {
	l := newLoader(t)
	for _, tc := range []struct {
		name, data, want string
	}{
		{"unknown field in a Deployment", strings.Replace(deployment, "image: nginx", "imagee: nginx", 1),
			`w.yaml, document 1 (Deployment web): strict decoding error: unknown field "spec.template.spec.containers[0].imagee"`},
		{"field in the wrong case", strings.Replace(deployment, "replicas:", "Replicas:", 1),
			`w.yaml, document 1 (Deployment web): strict decoding error: unknown field "spec.Replicas"`},
		{"wrong type", strings.Replace(deployment, "replicas: 2", "replicas: two", 1),
			`w.yaml, document 1 (Deployment web): json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32`},
		{"negative replicas", strings.Replace(deployment, "replicas: 2", "replicas: -1", 1),
			`w.yaml, document 1 (Deployment web): spec.replicas: Invalid value: -1: must be greater than or equal to 0`},
		{"no template", strings.Split(deployment, "  template:")[0],
			"w.yaml, document 1 (Deployment web): spec.template.metadata.labels: Invalid value: null: `selector` does not match template `labels`\n" +
				"w.yaml, document 1 (Deployment web): spec.template.spec.containers: Required value"},
		{"no selector", strings.Replace(deployment, "  selector: {matchLabels: {app: web}}\n", "", 1),
			`w.yaml, document 1 (Deployment web): spec.selector: Required value`},
		{"empty selector", strings.Replace(deployment, "selector: {matchLabels: {app: web}}", "selector: {}", 1),
			`w.yaml, document 1 (Deployment web): spec.selector: Invalid value: {}: empty selector is invalid for deployment`},
		{"malformed selector", strings.Replace(deployment, "selector: {matchLabels: {app: web}}", "selector: {matchExpressions: [{key: app, operator: Near}]}", 1),
			`w.yaml, document 1 (Deployment web): spec.selector.matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator`},
		{"negative request", strings.Replace(deployment, "cpu: 500m", "cpu: -1", 1),
			`w.yaml, document 1 (Deployment web): spec.template.spec.containers[0].resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0`},
		{"a Pod without containers", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {}\n",
			`w.yaml, document 1 (Pod p): spec.containers: Required value`},
		{"a Pod without a name", "apiVersion: v1\nkind: Pod\nmetadata: {generateName: p-}\nspec: {containers: [{name: c}]}\n",
			`w.yaml, document 1 (Pod): metadata.name: Required value: name or generateName is required`},
		{"a StatefulSet named like a domain", "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db.example}\nspec: {selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c}]}}}\n",
			`w.yaml, document 1 (StatefulSet db.example): metadata.name: Invalid value: "db.example": must not contain dots`},
		{"a Job restarting Always", "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: {template: {spec: {containers: [{name: c}]}}}\n",
			`w.yaml, document 1 (Job j): spec.template.spec.restartPolicy: Unsupported value: "": supported values: "OnFailure", "Never"`},
		{"a PDB with both bounds", "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: b}\nspec: {minAvailable: 1, maxUnavailable: 1}\n",
			`w.yaml, document 1 (PodDisruptionBudget b): spec: Invalid value: minAvailable and maxUnavailable cannot be both set`},
		{"a PDB with a bad percentage", "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: b}\nspec: {maxUnavailable: half}\n",
			`w.yaml, document 1 (PodDisruptionBudget b): spec.maxUnavailable: Invalid value: "half": a valid percent string must be`},
		{"a PDB above 100%", "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: b}\nspec: {minAvailable: 150%, selector: {matchLabels: {a: b}}}\n",
			`w.yaml, document 1 (PodDisruptionBudget b): spec.minAvailable: Invalid value: "150%": must not be greater than 100%`},
		{"a PDB with an unknown eviction policy", "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: b}\nspec: {minAvailable: 1, unhealthyPodEvictionPolicy: Sometimes}\n",
			`w.yaml, document 1 (PodDisruptionBudget b): spec.unhealthyPodEvictionPolicy: Unsupported value: "Sometimes": supported values: "AlwaysAllow", "IfHealthyBudget"`},
		{"a Deployment's bad template label", strings.Replace(deployment, "labels: {app: web}", `labels: {app: web, tier: "front end"}`, 1),
			`w.yaml, document 1 (Deployment web): spec.template.labels: Invalid value: "front end": a valid label must be`},
		{"a PVC without a storage request", "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c}\nspec: {accessModes: [ReadWriteOnce]}\n",
			`w.yaml, document 1 (PersistentVolumeClaim c): spec.resources.requests[storage]: Required value`},
		{"a PVC with a malformed storage request", "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c}\nspec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: lots}}}\n",
			`w.yaml, document 1 (PersistentVolumeClaim c): spec.resources.requests[storage]: Invalid value: "lots": quantities must match the regular expression`},
		{"a PV without capacity", "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: v}\nspec: {accessModes: [ReadWriteOnce]}\n",
			`w.yaml, document 1 (PersistentVolume v): spec.capacity[storage]: Required value`},
		{"a StorageClass without a provisioner", "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: s}\n",
			`w.yaml, document 1 (StorageClass s): provisioner: Required value`},
		{"a Namespace named like a domain", "apiVersion: v1\nkind: Namespace\nmetadata: {name: team.a}\n",
			`w.yaml, document 1 (Namespace team.a): metadata.name: Invalid value: "team.a": must not contain dots`},
		{"a bad namespace", strings.Replace(deployment, "name: web\n", "name: web\n  namespace: Team_A\n", 1),
			`w.yaml, document 1 (Deployment web): metadata.namespace: Invalid value: "Team_A": a lowercase RFC 1123 label must consist of`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := l.Read("w.yaml", []byte(tc.data), &Set{})
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error = %v\nwant it to start %s", err, tc.want)
			}
		})
	}
}

type named struct{ Kind, Namespace, Name string }

// namesOf names each object read of one kind.
func namesOf[T any, P interface {
	*T
	metav1.Object
}](kind string, items []T) []named {
	out := make([]named, len(items))
	for i := range items {
		o := P(&items[i])
		out[i] = named{kind, o.GetNamespace(), o.GetName()}
	}
	return out
}
