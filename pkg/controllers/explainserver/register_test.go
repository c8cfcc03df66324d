package explainserver_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/onsi/gomega"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/capstan-dev/capstan/pkg/cloudprovider/fake"
	"github.com/capstan-dev/capstan/pkg/clusterstate"
	"github.com/capstan-dev/capstan/pkg/controllers/explainserver"
	"github.com/capstan-dev/capstan/pkg/test"
)

// freeAddress is a localhost address nothing listens on.
func freeAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// Register mounts explain on the manager's metrics server: its routes
// answer there (a POST is refused as a method explain does not serve,
// where an unknown path would be 404), and mounting twice fails.
func TestRegisterMountsOnTheMetricsServer(t *testing.T) {
	g := test.NewGomega(t)
	addr := freeAddress(t)
	mgr, err := manager.New(env.Config, manager.Options{
		Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: addr},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := explainserver.New(explainserver.Deps{
		Reader: env.Client, Cluster: &clusterstate.Cluster{Client: env.Client, Cloud: fake.New()}, Clock: clocktesting.NewFakeClock(time.Now()),
	}, explainserver.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	if err := srv.Register(ctx, mgr); err != nil {
		t.Fatal(err)
	}
	if err := srv.Register(ctx, mgr); err == nil {
		t.Error("a second Register succeeded, want a duplicate path error")
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("manager stopped with %v", err)
		}
	})
	g.Eventually(func(g gomega.Gomega) {
		resp, err := http.Post("http://"+addr+explainserver.Path+"node/n", "text/plain", nil)
		g.Expect(err).NotTo(gomega.HaveOccurred())
		_ = resp.Body.Close()
		g.Expect(resp.StatusCode).To(gomega.Equal(http.StatusMethodNotAllowed))
	}).Should(gomega.Succeed())
}
