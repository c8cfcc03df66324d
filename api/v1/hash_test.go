package v1_test

import (
	"context"
	"encoding/json"
	"regexp"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/test"
)

// hashBase is a NodePool with every hashed field set, so each case below
// can change one of them.
func hashBase() *v1.NodePool {
	return test.NodePool(func(np *v1.NodePool) {
		np.Name = "hashed"
		np.Spec.Weight = ptr.To[int32](10)
		np.Spec.Limits = v1.Limits{corev1.ResourceCPU: resource.MustParse("100")}
		np.Spec.Disruption = v1.Disruption{
			ConsolidateAfter:    v1.MustParseNillableDuration("30s"),
			ConsolidationPolicy: v1.ConsolidationPolicyWhenEmpty,
			Budgets:             []v1.Budget{{Nodes: "10%"}},
		}
		np.Spec.Template.ObjectMeta.Labels = map[string]string{"team": "a", "tier": "web", "zone-class": "x"}
		np.Spec.Template.ObjectMeta.Annotations = map[string]string{"owner": "a"}
		np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{
			{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{v1.CapacityTypeSpot}},
		}
		np.Spec.Template.Spec.Taints = []corev1.Taint{
			{Key: "a", Value: "1", Effect: corev1.TaintEffectNoSchedule},
			{Key: "b", Effect: corev1.TaintEffectNoExecute},
		}
		np.Spec.Template.Spec.StartupTaints = []corev1.Taint{{Key: "init", Effect: corev1.TaintEffectNoSchedule}}
		np.Spec.Template.Spec.ExpireAfter = v1.MustParseNillableDuration("720h")
		np.Spec.Template.Spec.TerminationGracePeriod = &metav1.Duration{Duration: time.Hour}
	})
}

func TestHashChangesWithTheStaticTemplateOnly(t *testing.T) {
	cases := []struct {
		name    string
		mod     func(*v1.NodePool)
		changes bool
	}{
		{"a template label value", func(np *v1.NodePool) { np.Spec.Template.ObjectMeta.Labels["team"] = "b" }, true},
		{"a new template label", func(np *v1.NodePool) { np.Spec.Template.ObjectMeta.Labels["new"] = "" }, true},
		{"a template annotation", func(np *v1.NodePool) { np.Spec.Template.ObjectMeta.Annotations["owner"] = "b" }, true},
		{"a taint's value", func(np *v1.NodePool) { np.Spec.Template.Spec.Taints[0].Value = "2" }, true},
		{"a taint's effect", func(np *v1.NodePool) { np.Spec.Template.Spec.Taints[1].Effect = corev1.TaintEffectNoSchedule }, true},
		{"one taint fewer", func(np *v1.NodePool) { np.Spec.Template.Spec.Taints = np.Spec.Template.Spec.Taints[:1] }, true},
		{"a startup taint", func(np *v1.NodePool) { np.Spec.Template.Spec.StartupTaints[0].Key = "other" }, true},
		{"a taint moved to the startup taints", func(np *v1.NodePool) {
			s := &np.Spec.Template.Spec
			s.StartupTaints = append(s.StartupTaints, s.Taints[1])
			s.Taints = s.Taints[:1]
		}, true},
		{"expireAfter", func(np *v1.NodePool) { np.Spec.Template.Spec.ExpireAfter = v1.MustParseNillableDuration("24h") }, true},
		{"expireAfter Never", func(np *v1.NodePool) { np.Spec.Template.Spec.ExpireAfter = v1.MustParseNillableDuration(v1.Never) }, true},
		{"nodeClassRef name", func(np *v1.NodePool) { np.Spec.Template.Spec.NodeClassRef.Name = "other" }, true},
		{"nodeClassRef kind", func(np *v1.NodePool) { np.Spec.Template.Spec.NodeClassRef.Kind = "EC2NodeClass" }, true},
		{"terminationGracePeriod", func(np *v1.NodePool) {
			np.Spec.Template.Spec.TerminationGracePeriod = &metav1.Duration{Duration: 2 * time.Hour}
		}, true},
		{"terminationGracePeriod unset", func(np *v1.NodePool) { np.Spec.Template.Spec.TerminationGracePeriod = nil }, true},

		{"nothing", func(*v1.NodePool) {}, false},
		{"requirements", func(np *v1.NodePool) {
			np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements,
				v1.NodeSelectorRequirementWithMinValues{Key: v1.LabelZone, Operator: corev1.NodeSelectorOpExists})
		}, false},
		{"no requirements", func(np *v1.NodePool) { np.Spec.Template.Spec.Requirements = nil }, false},
		{"weight", func(np *v1.NodePool) { np.Spec.Weight = ptr.To[int32](90) }, false},
		{"limits", func(np *v1.NodePool) { np.Spec.Limits = v1.Limits{corev1.ResourceMemory: resource.MustParse("1Ti")} }, false},
		{"disruption", func(np *v1.NodePool) {
			np.Spec.Disruption.ConsolidationPolicy = v1.ConsolidationPolicyWhenEmptyOrUnderutilized
			np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "0", Schedule: ptr.To("@daily"), Duration: &metav1.Duration{Duration: time.Hour}}}
		}, false},
		{"the NodePool's own metadata", func(np *v1.NodePool) {
			np.Name = "renamed"
			np.Generation = 7
			np.Annotations = map[string]string{v1.NodePoolHashAnnotationKey: "stale"}
		}, false},
		{"status", func(np *v1.NodePool) {
			np.Status.Resources = corev1.ResourceList{"nodes": resource.MustParse("3")}
		}, false},
		{"the order of taints", func(np *v1.NodePool) {
			ts := np.Spec.Template.Spec.Taints
			ts[0], ts[1] = ts[1], ts[0]
		}, false},
	}
	base := hashBase().Hash()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			np := hashBase()
			tc.mod(np)
			if got := np.Hash(); (got != base) != tc.changes {
				t.Errorf("hash %s, base %s: changed = %t, want %t", got, base, got != base, tc.changes)
			}
		})
	}
}

func TestHashIsDeterministic(t *testing.T) {
	want := hashBase().Hash()
	if !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(want) {
		t.Fatalf("hash %q, want 16 lowercase hex characters", want)
	}
	for i := range 200 {
		// Fresh maps each time, so Go's randomised map order varies.
		if got := hashBase().Hash(); got != want {
			t.Fatalf("hash %d = %s, want %s", i, got, want)
		}
	}
	np := hashBase()
	ts := np.Spec.Template.Spec.Taints
	ts[0], ts[1] = ts[1], ts[0]
	before := np.DeepCopy()
	np.Hash()
	if diff := cmp.Diff(before, np); diff != "" {
		t.Errorf("Hash modified the NodePool (-before +after):\n%s", diff)
	}

	b, err := json.Marshal(hashBase())
	if err != nil {
		t.Fatal(err)
	}
	decoded := &v1.NodePool{}
	if err := json.Unmarshal(b, decoded); err != nil {
		t.Fatal(err)
	}
	if got := decoded.Hash(); got != want {
		t.Errorf("hash after a JSON round trip %s, want %s", got, want)
	}
}

// A NodeClaim stamped by one Capstan must not look drifted to the next one
// with the same NodePoolHashVersion: the hash of a fixed NodePool is pinned.
func TestHashIsPinnedForItsVersion(t *testing.T) {
	const pinned = "af66d0735683d661"
	if got := hashBase().Hash(); v1.NodePoolHashVersion != "v1" || got != pinned {
		t.Errorf("hash %s (version %s), pinned %s for v1: a change to what or how Hash hashes must bump NodePoolHashVersion and re-pin",
			got, v1.NodePoolHashVersion, pinned)
	}
}

// The API server's defaulting and encoding leave the hash as the stored
// object's reader computes it, every time it is read.
func TestHashIsStableThroughTheAPIServer(t *testing.T) {
	ctx := context.Background()
	np := hashBase()
	np.Name = test.RandomName("hashed")
	if err := env.Client.Create(ctx, np); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(ctx, np) })
	first, second := &v1.NodePool{}, &v1.NodePool{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(np), first); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(np), second); err != nil {
		t.Fatal(err)
	}
	if first.Hash() != second.Hash() || first.Hash() != hashBase().Hash() {
		t.Errorf("hash of the stored NodePool %s then %s, want %s (every hashed field was set, so defaulting adds nothing)",
			first.Hash(), second.Hash(), hashBase().Hash())
	}
}
