package sim

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/onsi/gomega"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/providers"
	"github.com/capstan-dev/capstan/pkg/test"
)

func parsed(t *testing.T, args ...string) *Provider {
	t.Helper()
	p := New()
	f := pflag.NewFlagSet("controller", pflag.ContinueOnError)
	p.BindFlags(f)
	if err := f.Parse(args); err != nil {
		t.Fatal(err)
	}
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

func TestAddToScheme(t *testing.T) {
	s := runtime.NewScheme()
	if err := New().AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if !s.Recognizes(simv1alpha1.SchemeGroupVersion.WithKind(simv1alpha1.SimNodeClassKind)) {
		t.Error("the scheme does not know SimNodeClass")
	}
}

func startEnv(t *testing.T, mgr manager.Manager) providers.Env {
	t.Helper()
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	return providers.Env{Manager: mgr, Clock: clk, Unavailable: cloudprovider.NewUnavailableOfferings(clk, time.Minute)}
}

func TestStartFailsOnAMissingProfile(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.yaml")
	p := parsed(t, "--cloud-profile="+missing, "--sim-state="+filepath.Join(t.TempDir(), "state.json"))
	if _, err := p.Start(context.Background(), startEnv(t, nil)); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("Start() = %v, want an error naming the profile", err)
	}
}

// Started on a manager, the provider's cloud is the simulated one and its
// controllers run: a SimNodeClass is resolved to Ready.
func TestStartRegistersTheNodeClassController(t *testing.T) {
	g := test.NewGomega(t)
	ctx := context.Background()
	p := parsed(t, "--sim-state="+filepath.Join(t.TempDir(), "state.json"))
	var started providers.Started
	test.StartManager(t, env, func(mgr manager.Manager) error {
		var err error
		if started, err = p.Start(ctx, startEnv(t, mgr)); err != nil {
			return err
		}
		return started.Register(ctx, mgr)
	})
	if started.Cloud.Name() != "sim" {
		t.Errorf("the cloud is %q, want sim", started.Cloud.Name())
	}
	want := []schema.GroupVersionKind{simv1alpha1.SchemeGroupVersion.WithKind(simv1alpha1.SimNodeClassKind)}
	if diff := cmp.Diff(want, started.Cloud.GetSupportedNodeClasses()); diff != "" {
		t.Errorf("GetSupportedNodeClasses() (-want +got):\n%s", diff)
	}

	nc := test.SimNodeClass()
	g.Expect(env.Client.Create(ctx, nc)).To(gomega.Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), nc) })
	g.Eventually(func(g gomega.Gomega) {
		got := &simv1alpha1.SimNodeClass{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(nc), got)).To(gomega.Succeed())
		g.Expect(meta.IsStatusConditionPresentAndEqual(got.Status.Conditions, simv1alpha1.ConditionTypeReady, metav1.ConditionTrue)).To(gomega.BeTrue())
	}).Should(gomega.Succeed())
}
