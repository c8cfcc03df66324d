package simulator

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/capstan-dev/capstan/pkg/manifests"
)

// workload is a controller that keeps a number of pods: what the
// Deployment, ReplicaSet, StatefulSet and Job controllers do, reduced to
// creating and deleting pods. Deployments own their pods through one
// ReplicaSet, as in a cluster, so PDBs and topology spread see the same
// labels and owners.
type workload struct {
	kind, namespace, name string
	replicas              int32
	template              corev1.PodTemplateSpec
	// owner is the pods' controller reference.
	owner metav1.OwnerReference
	// ordinal names pods name-0, name-1 … (StatefulSets); otherwise pods
	// get a random suffix.
	ordinal bool
	// claims are a StatefulSet's volume claim templates.
	claims []corev1.PersistentVolumeClaim
	// hash is the pod-template-hash label Deployments put on their pods.
	hash string
	pods map[string]bool
	// rollout replaces pods of an earlier template after a timed update
	// (rollout.go); nil otherwise.
	rollout *rollout
}

func workloadsOf(set *manifests.Set) []*workload {
	var out []*workload
	for _, d := range set.Deployments {
		w := newWorkload("Deployment", d.ObjectMeta, d.Spec.Replicas, d.Spec.Template)
		w.hash = fmt.Sprintf("%08x", hashOf(d.Namespace+"/"+d.Name))[:8]
		w.owner = metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: d.Name + "-" + w.hash, Controller: ptr.To(true)}
		out = append(out, w)
	}
	for _, rs := range set.ReplicaSets {
		out = append(out, newWorkload("ReplicaSet", rs.ObjectMeta, rs.Spec.Replicas, rs.Spec.Template))
	}
	for _, ss := range set.StatefulSets {
		w := newWorkload("StatefulSet", ss.ObjectMeta, ss.Spec.Replicas, ss.Spec.Template)
		w.ordinal, w.claims = true, ss.Spec.VolumeClaimTemplates
		out = append(out, w)
	}
	for _, j := range set.Jobs {
		out = append(out, newWorkload("Job", j.ObjectMeta, jobPods(j), j.Spec.Template))
	}
	return out
}

func newWorkload(kind string, meta metav1.ObjectMeta, replicas *int32, tmpl corev1.PodTemplateSpec) *workload {
	return &workload{
		kind: kind, namespace: meta.Namespace, name: meta.Name, replicas: ptr.Deref(replicas, 1), template: tmpl,
		owner: metav1.OwnerReference{APIVersion: apiVersionOf(kind), Kind: kind, Name: meta.Name, Controller: ptr.To(true)},
		pods:  map[string]bool{},
	}
}

func apiVersionOf(kind string) string {
	if kind == "Job" {
		return "batch/v1"
	}
	return "apps/v1"
}

// jobPods is how many pods a Job runs at once: its parallelism, at most
// its completions. Pods never finish in a simulation (nothing models how
// long they run), so a Job keeps them for the whole run.
func jobPods(j batchv1.Job) *int32 {
	n := ptr.Deref(j.Spec.Parallelism, 1)
	if j.Spec.Completions != nil && *j.Spec.Completions < n {
		n = *j.Spec.Completions
	}
	return &n
}

// target matches a Scale event's workload, "namespace/name" of a
// Deployment.
func (w *workload) target() string { return w.namespace + "/" + w.name }

// reconcile creates and deletes pods until the workload has its replicas:
// newest pods go first on scale-down, as the ReplicaSet controller
// prefers pods not yet running.
func (w *workload) reconcile(world *world, rng *rand.Rand) (created, deleted int) {
	if w.rollout != nil {
		c, d, done := w.roll(world, rng)
		if done {
			return c, d
		}
		created, deleted = c, d
	}
	var live []*corev1.Pod
	for key := range w.pods {
		if p, ok := world.pods[key]; ok {
			live = append(live, p)
		} else {
			delete(w.pods, key)
		}
	}
	// Only a scale-down needs them in order (sorting every round was
	// most of this step).
	if len(live) > int(w.replicas) {
		world.inCreationOrder(live)
	}
	for i := len(live) - 1; i >= int(w.replicas); i-- {
		world.deletePod(live[i])
		delete(w.pods, podKey(live[i]))
		deleted++
	}
	for n := len(live); n < int(w.replicas); n++ {
		p := w.newPod(world, rng)
		world.addPod(p)
		w.pods[podKey(p)] = true
		created++
	}
	return created, deleted
}

func (w *workload) newPod(world *world, rng *rand.Rand) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: *w.template.ObjectMeta.DeepCopy(), Spec: *w.template.Spec.DeepCopy()}
	p.Namespace = w.namespace
	p.OwnerReferences = []metav1.OwnerReference{w.owner}
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	switch {
	case w.ordinal:
		p.Name = w.freeOrdinal(world)
		p.Labels[appsv1.StatefulSetPodNameLabel] = p.Name
		w.bindClaims(world, p)
	case w.hash != "":
		p.Name = freeName(world, w.namespace, w.owner.Name, rng)
		p.Labels[appsv1.DefaultDeploymentUniqueLabelKey] = w.hash
	default:
		p.Name = freeName(world, w.namespace, w.name, rng)
	}
	return p
}

// freeName is prefix-xxxxx, drawn again while a pod has it. Giving up
// on a taken name until the next round instead would leave the rest of
// the replicas to later rounds, each binding the whole cluster again:
// tens of thousands of replicas draw hundreds of taken names.
func freeName(world *world, namespace, prefix string, rng *rand.Rand) string {
	for {
		name := prefix + "-" + suffix(rng)
		if _, taken := world.pods[namespace+"/"+name]; !taken {
			return name
		}
	}
}

func (w *workload) freeOrdinal(world *world) string {
	for i := 0; ; i++ {
		name := fmt.Sprintf("%s-%d", w.name, i)
		if _, taken := world.pods[w.namespace+"/"+name]; !taken {
			return name
		}
	}
}

// bindClaims gives a StatefulSet pod its own claim from each template,
// created once and kept across the pod's replacements.
func (w *workload) bindClaims(world *world, p *corev1.Pod) {
	for _, tmpl := range w.claims {
		name := tmpl.Name + "-" + p.Name
		exists := false
		for _, c := range world.claimsPVC {
			exists = exists || (c.Namespace == w.namespace && c.Name == name)
		}
		if !exists {
			c := *tmpl.DeepCopy()
			c.Name, c.Namespace = name, w.namespace
			world.claimsPVC = append(world.claimsPVC, c)
		}
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: tmpl.Name, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: name},
		}})
	}
}

// suffix is a pod name's random part, drawn from the run's seeded source.
func suffix(rng *rand.Rand) string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	var b strings.Builder
	for range 5 {
		b.WriteByte(alphabet[rng.IntN(len(alphabet))])
	}
	return b.String()
}

func hashOf(s string) uint32 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(s))
	return h.Sum32()
}
