package test

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// RestartAPIServer stops kube-apiserver (SIGTERM: it drains its short
// requests and gives the watches 2 s, see start) and starts it again, etcd
// running throughout so nothing stored is lost, and returns once it is
// ready. envtest's APIServer restarts as it was: Start keeps the secure
// port it chose the first time and, the certificate directory being
// Root's rather than a temporary one Stop would remove, the serving
// certificate and the client CA, so every kubeconfig of the cluster stays
// valid and its clients reconnect by themselves. Another process could
// take the port while it is free; with ports chosen at random that is
// unlikely, and Start fails if it happens.
func (c *Cluster) RestartAPIServer(ctx context.Context) error {
	api := c.env.ControlPlane.GetAPIServer()
	if err := api.Stop(); err != nil {
		return fmt.Errorf("stopping kube-apiserver, %w", err)
	}
	if err := api.Start(); err != nil {
		return fmt.Errorf("starting kube-apiserver again, %w", err)
	}
	return waitReady(ctx, c.Config)
}

// waitReady polls the API server's /readyz as cfg's user until it answers
// ok, or a minute passes. envtest's Start waits for /healthz only, which
// passes before the server's own informers have synced: until they have,
// its RBAC authorizer may deny the components' non-admin users.
func waitReady(ctx context.Context, cfg *rest.Config) error {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return fmt.Errorf("building a client for /readyz, %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		_, err := dc.RESTClient().Get().AbsPath("/readyz").Timeout(time.Second).DoRaw(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for kube-apiserver to be ready, %w (last answer: %w)", ctx.Err(), err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
