package scaleup

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/effects"
	"github.com/capstan-dev/capstan/pkg/test"
)

// staticSummary is the part of a StaticDecision the table asserts.
type staticSummary struct {
	Active, Deleting, Pending int64
	Created                   []string
	Deleted                   []string
	LimitReached              bool
}

func summarizeStatic(d StaticDecision) staticSummary {
	s := staticSummary{Active: d.Active, Deleting: d.Deleting, Pending: d.Pending, LimitReached: d.LimitReached}
	for _, nc := range d.Create {
		s.Created = append(s.Created, nc.Name)
	}
	for _, nc := range d.Delete {
		s.Deleted = append(s.Deleted, nc.Name)
	}
	return s
}

// staticWorld builds a static NodePool's NodeClaims, nodes and pods.
type staticWorld struct{ in StaticInput }

func newStaticWorld(replicas *int64, mods ...func(*v1.NodePool)) *staticWorld {
	np := test.NodePool(func(np *v1.NodePool) { np.Name = "static"; np.Spec.Replicas = replicas })
	for _, m := range mods {
		m(np)
	}
	return &staticWorld{in: StaticInput{NodePool: np, Usable: true, Nodes: map[string]*corev1.Node{}, Pods: map[string][]*corev1.Pod{}}}
}

// claim adds a NodeClaim; launched ones get a node running pods.
func (w *staticWorld) claim(name string, launched bool, pods ...*corev1.Pod) *v1.NodeClaim {
	nc := test.NodeClaim(func(nc *v1.NodeClaim) { nc.Name = name; nc.Labels = map[string]string{v1.NodePoolLabelKey: "static"} })
	if launched {
		nc.Status.ProviderID, nc.Status.NodeName = "sim:///"+name, name+"-node"
		w.in.Nodes[nc.Status.NodeName] = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nc.Status.NodeName}}
		w.in.Pods[nc.Status.NodeName] = pods
	}
	w.in.NodeClaims = append(w.in.NodeClaims, nc)
	return nc
}

func plainPod(name string, mods ...func(*corev1.Pod)) *corev1.Pod {
	p := test.Pod("default", func(p *corev1.Pod) { p.Name = name })
	for _, m := range mods {
		m(p)
	}
	return p
}

func daemonPod(p *corev1.Pod) {
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "ds", Controller: ptr.To(true)}}
}

func doNotDisrupt(p *corev1.Pod) {
	p.Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: "true"}
}

// The cases follow the reference's static provisioning and
// deprovisioning controllers and their suites (pkg/controllers/static,
// v1.8) and designs/static-capacity.md.
func TestDecideStatic(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		world func() *staticWorld
		want  staticSummary
	}{
		{"a dynamic NodePool is left alone", func() *staticWorld {
			w := newStaticWorld(nil)
			w.claim("a", true)
			return w
		}, staticSummary{}},
		{"a deleted NodePool launches nothing", func() *staticWorld {
			return newStaticWorld(ptr.To[int64](2), func(np *v1.NodePool) { np.DeletionTimestamp = &metav1.Time{Time: now} })
		}, staticSummary{}},
		{"a new NodePool launches its replicas, whatever the pods ask", func() *staticWorld {
			return newStaticWorld(ptr.To[int64](3))
		}, staticSummary{Created: []string{"static-1", "static-2", "static-3"}}},
		{"an unusable NodePool launches nothing", func() *staticWorld {
			w := newStaticWorld(ptr.To[int64](2))
			w.in.Usable = false
			return w
		}, staticSummary{}},
		{"an unusable NodePool still scales down", func() *staticWorld {
			w := newStaticWorld(ptr.To[int64](1))
			w.in.Usable = false
			w.claim("a", true)
			w.claim("b", false)
			return w
		}, staticSummary{Active: 2, Deleted: []string{"b"}}},
		{"at its replicas nothing happens", func() *staticWorld {
			w := newStaticWorld(ptr.To[int64](2))
			w.claim("a", true)
			w.claim("b", false)
			return w
		}, staticSummary{Active: 2}},
		{"a deleting NodeClaim is replaced at once", func() *staticWorld {
			w := newStaticWorld(ptr.To[int64](2))
			w.claim("a", true)
			w.claim("b", true).DeletionTimestamp = &metav1.Time{Time: now}
			return w
		}, staticSummary{Active: 1, Deleting: 1, Created: []string{"static-1"}}},
		{"limits.nodes counts deleting NodeClaims and caps the launch", func() *staticWorld {
			w := newStaticWorld(ptr.To[int64](5), func(np *v1.NodePool) { np.Spec.Limits = v1.Limits{"nodes": resource.MustParse("3")} })
			w.claim("a", true)
			w.claim("b", true).DeletionTimestamp = &metav1.Time{Time: now}
			return w
		}, staticSummary{Active: 1, Deleting: 1, Created: []string{"static-1"}, LimitReached: true}},
		{"at limits.nodes nothing launches", func() *staticWorld {
			w := newStaticWorld(ptr.To[int64](3), func(np *v1.NodePool) { np.Spec.Limits = v1.Limits{"nodes": resource.MustParse("1")} })
			w.claim("a", true)
			return w
		}, staticSummary{Active: 1, LimitReached: true}},
		{"a node being replaced by disruption counts as present, and is no surplus", func() *staticWorld {
			w := newStaticWorld(ptr.To[int64](2))
			w.claim("a", true)
			old := w.claim("old", true)
			w.in.Nodes[old.Status.NodeName].Spec.Taints = []corev1.Taint{v1.DisruptedNoScheduleTaint()}
			w.claim("replacement", false)
			return w
		}, staticSummary{Active: 2, Pending: 1}},
		{"scale-down: not launched first, then empty, then least disruptive, do-not-disrupt last", func() *staticWorld {
			w := newStaticWorld(ptr.To[int64](1))
			w.claim("e-protected", true, plainPod("p0", doNotDisrupt))
			w.claim("d-three-pods", true, plainPod("p1"), plainPod("p2"), plainPod("p3"))
			w.claim("c-one-pod", true, plainPod("p4"))
			w.claim("b-daemons-only", true, plainPod("d0", daemonPod))
			w.claim("a-not-launched", false)
			return w
		}, staticSummary{Active: 5, Deleted: []string{"a-not-launched", "b-daemons-only", "c-one-pod", "d-three-pods"}}},
		{"a do-not-disrupt daemonset pod makes its node no empty one", func() *staticWorld {
			w := newStaticWorld(ptr.To[int64](1))
			w.claim("a-protected-daemon", true, plainPod("d0", daemonPod, doNotDisrupt))
			w.claim("b-busy", true, plainPod("p0"))
			return w
		}, staticSummary{Active: 2, Deleted: []string{"b-busy"}}},
		{"scaled to zero, every active NodeClaim goes", func() *staticWorld {
			w := newStaticWorld(ptr.To[int64](0))
			w.claim("a", true)
			w.claim("b", true, plainPod("p0"))
			w.claim("c", true).DeletionTimestamp = &metav1.Time{Time: now}
			return w
		}, staticSummary{Active: 2, Deleting: 1, Deleted: []string{"a", "b"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			name := func(np string) string { n++; return fmt.Sprintf("%s-%d", np, n) }
			got := summarizeStatic(DecideStatic(tc.world().in, now, name))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
		})
	}
}

// A replica is the template as the reference's static NodeClaims are:
// its labels and requirements, the NodePool label and owner, no instance
// types chosen, so the cloud launches the cheapest the template allows.
func TestDecideStaticRendersTheTemplate(t *testing.T) {
	w := newStaticWorld(ptr.To[int64](1), func(np *v1.NodePool) {
		np.Spec.Template.ObjectMeta.Labels = map[string]string{"team": "ml"}
		np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{{Key: v1.LabelZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"zone-a"}}}
	})
	d := DecideStatic(w.in, time.Time{}, func(np string) string { return np + "-x" })
	if len(d.Create) != 1 {
		t.Fatalf("created %d; want 1", len(d.Create))
	}
	nc := d.Create[0]
	if diff := cmp.Diff(map[string]string{"team": "ml", v1.NodePoolLabelKey: "static"}, nc.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	want := []v1.NodeSelectorRequirementWithMinValues{
		{Key: v1.NodePoolLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{"static"}},
		{Key: "team", Operator: corev1.NodeSelectorOpIn, Values: []string{"ml"}},
		{Key: v1.LabelZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"zone-a"}},
	}
	if diff := cmp.Diff(want, nc.Spec.Requirements); diff != "" {
		t.Errorf("requirements (-want +got):\n%s", diff)
	}
	if len(nc.OwnerReferences) != 1 || nc.OwnerReferences[0].Name != "static" {
		t.Errorf("owner references %v; want the NodePool", nc.OwnerReferences)
	}
}

func TestStaticDecisionEffects(t *testing.T) {
	w := newStaticWorld(ptr.To[int64](1))
	w.claim("a", true)
	w.claim("b", true)
	d := DecideStatic(w.in, time.Time{}, nil)
	want := []effects.Effect{
		effects.Event{Object: effects.NodePoolRef("static"), Type: corev1.EventTypeNormal, Reason: EventAboveReplicas, Action: "Deprovision",
			Message: "deleting nodeclaims a: 2 replicas active, 1 desired"},
		effects.DeleteNodeClaim{Name: "a", Reason: DeletionReasonOverprovisioned},
	}
	if diff := cmp.Diff(want, d.Effects()); diff != "" {
		t.Errorf("effects (-want +got):\n%s", diff)
	}
}
