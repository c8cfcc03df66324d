package sim

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	"github.com/capstan-dev/capstan/pkg/test"
)

func parsed(t *testing.T, args ...string) *Provider {
	t.Helper()
	p := New()
	test.ParseProviderFlags(t, p, args...)
	return p
}

func TestFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want Options
	}{
		{want: Options{State: "capstan-sim-state.json"}},
		{args: []string{"--cloud-profile=p.yaml", "--sim-state=/var/lib/s.json"}, want: Options{CloudProfile: "p.yaml", State: "/var/lib/s.json"}},
	} {
		p := parsed(t, tc.args...)
		if diff := cmp.Diff(tc.want, p.opts); diff != "" {
			t.Errorf("%v parsed (-want +got):\n%s", tc.args, diff)
		}
		if err := p.Validate(); err != nil {
			t.Errorf("%v: Validate() = %v", tc.args, err)
		}
	}
}

// The state file must be named: an empty --sim-state would keep the
// inventory nowhere.
func TestValidateNeedsAStateFile(t *testing.T) {
	if err := parsed(t, "--sim-state=").Validate(); err == nil || !strings.Contains(err.Error(), "--sim-state must name") {
		t.Errorf("Validate() = %v, want a --sim-state error", err)
	}
}

// start is the fake clock's now.
var start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestStartFailsOnAMissingProfile(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.yaml")
	p := parsed(t, "--cloud-profile="+missing, "--sim-state="+filepath.Join(t.TempDir(), "state.json"))
	if _, err := p.Start(context.Background(), test.ProviderEnv(nil, start)); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("Start() = %v, want an error naming the profile", err)
	}
}

// Started on a manager, the provider's cloud is the simulated one and its
// controllers run: a SimNodeClass is resolved to Ready.
func TestStartRegistersTheNodeClassController(t *testing.T) {
	g := test.NewGomega(t)
	ctx := context.Background()
	p := parsed(t, "--sim-state="+filepath.Join(t.TempDir(), "state.json"))
	test.StartProvider(t, env, p, start)

	nc := test.SimNodeClass()
	g.Expect(env.Client.Create(ctx, nc)).To(gomega.Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), nc) })
	g.Eventually(func(g gomega.Gomega) {
		got := &simv1alpha1.SimNodeClass{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(nc), got)).To(gomega.Succeed())
		g.Expect(meta.IsStatusConditionPresentAndEqual(got.Status.Conditions, simv1alpha1.ConditionTypeReady, metav1.ConditionTrue)).To(gomega.BeTrue())
	}).Should(gomega.Succeed())
}
