package ec2nodeclass

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	awsprovider "github.com/capstan-dev/capstan/pkg/cloudprovider/aws"
	"github.com/capstan-dev/capstan/pkg/test"
)

func TestHashStamps(t *testing.T) {
	const ca = "Q0E="
	class := ec2NodeClass(func(nc *awsv1.EC2NodeClass) { nc.Name = "default" })
	hash := awsprovider.NodeClassHash(class, ca)
	stamped := func(h, version string) map[string]string {
		return map[string]string{awsprovider.NodeClassHashAnnotationKey: h, awsprovider.NodeClassHashVersionAnnotationKey: version}
	}
	claim := func(name, classRef string, annotations map[string]string, drifted bool) v1.NodeClaim {
		c := v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations}}
		c.Spec.NodeClassRef = &v1.NodeClassReference{Group: awsv1.Group, Kind: "EC2NodeClass", Name: classRef}
		if drifted {
			c.Status.Conditions = []metav1.Condition{{Type: v1.ConditionTypeDrifted, Status: metav1.ConditionTrue, Reason: "NodeClassDrift"}}
		}
		return c
	}
	claims := []v1.NodeClaim{
		claim("old-version", "default", stamped("1", "v4"), false),
		claim("old-version-drifted", "default", stamped("1", "v4"), true),
		claim("no-hash", "default", nil, false),
		claim("current", "default", stamped("1", "v5"), false),
		claim("other-class", "gpu", stamped("1", "v4"), false),
	}
	for _, tc := range []struct {
		name       string
		annotation map[string]string
		wantClass  map[string]string
		wantClaims map[string]map[string]string
	}{
		{"class never stamped", nil, stamped(hash, "v5"), map[string]map[string]string{
			"old-version":         stamped(hash, "v5"),
			"old-version-drifted": stamped("1", "v5"),
			"no-hash":             stamped(hash, "v5"),
		}},
		{"class of another version", map[string]string{"team": "ml", awsprovider.NodeClassHashAnnotationKey: "x", awsprovider.NodeClassHashVersionAnnotationKey: "v1"},
			map[string]string{"team": "ml", awsprovider.NodeClassHashAnnotationKey: hash, awsprovider.NodeClassHashVersionAnnotationKey: "v5"},
			map[string]map[string]string{
				"old-version":         stamped(hash, "v5"),
				"old-version-drifted": stamped("1", "v5"),
				"no-hash":             stamped(hash, "v5"),
			}},
		// A spec change under the same version: only the class's hash
		// changes, and the claims drift.
		{"class of this version, spec changed", stamped("2", "v5"), stamped(hash, "v5"), map[string]map[string]string{}},
		{"class up to date", stamped(hash, "v5"), nil, map[string]map[string]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := class.DeepCopy()
			c.Annotations = tc.annotation
			got := HashStamps(c, claims, ca)
			if diff := cmp.Diff(tc.wantClass, got.Class); diff != "" {
				t.Errorf("class annotations (-want +got):\n%s", diff)
			}
			gotClaims := map[string]map[string]string{}
			for _, c := range got.Claims {
				gotClaims[c.Name] = c.Annotations
			}
			if diff := cmp.Diff(tc.wantClaims, gotClaims); diff != "" {
				t.Errorf("claim annotations (-want +got):\n%s", diff)
			}
		})
	}
}

// Reconcile stamps the class with the reference's hash and version and
// re-stamps its NodeClaims launched under another hash version (here
// Capstan's former v1) so they are not drifted for it.
func TestReconcileStampsTheHash(t *testing.T) {
	g := test.NewGomega(t)
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(start)
	c := mustNew(t, Deps{Client: env.Client, EC2: account(), Clock: clk, Recorder: events.NewFakeRecorder(10), Cluster: flagsOnly}, Options{KubernetesVersion: "1.30"})
	nc := ec2NodeClass()
	create(t, nc)
	claim := test.NodeClaim(func(c *v1.NodeClaim) {
		c.Spec.NodeClassRef = &v1.NodeClassReference{Group: awsv1.Group, Kind: "EC2NodeClass", Name: nc.Name}
		c.Annotations = map[string]string{awsprovider.NodeClassHashAnnotationKey: "0123abcd", awsprovider.NodeClassHashVersionAnnotationKey: "v1"}
	})
	create(t, claim)

	_, err := c.Reconcile(ctx, reconcile.Request{NamespacedName: types.NamespacedName{Name: nc.Name}})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	got := &awsv1.EC2NodeClass{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(nc), got)).To(gomega.Succeed())
	b, _ := flagsOnly.Bootstrap(ctx)
	want := awsprovider.HashAnnotations(got, b.CABundle)
	g.Expect(got.Annotations).To(gomega.Equal(want))
	gotClaim := &v1.NodeClaim{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(claim), gotClaim)).To(gomega.Succeed())
	g.Expect(gotClaim.Annotations).To(gomega.Equal(want))
}
