package test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/envtest"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
)

// SecondSchedulerName is the local cluster's second kube-scheduler
// profile, standing in for a custom scheduler such as llmaz's.
const SecondSchedulerName = "second-scheduler"

// ServiceCIDR is the local cluster's service range: what EKS picks for a
// cluster in a 10.0.0.0/8 VPC, as the local EC2 endpoint's is.
const ServiceCIDR = "172.20.0.0/16"

// Cluster is the full local control plane: etcd and kube-apiserver
// (envtest), kube-scheduler with two profiles, kube-controller-manager and
// kwok managing nodes labelled sim.capstan.dev/kubelet=kwok.
type Cluster struct {
	*Environment
	// Root holds the kubeconfig, configs, data and logs.
	Root string
	// Kubeconfig is an admin kubeconfig for the cluster.
	Kubeconfig string

	procs []*process
}

// StartCluster starts the local control plane. Leftovers of earlier
// crashed runs are reaped first. On error everything started is stopped.
func StartCluster(ctx context.Context) (*Cluster, error) {
	if _, err := ReapOrphans(); err != nil {
		return nil, fmt.Errorf("reaping orphaned clusters, %w", err)
	}
	dir, err := BinaryDir()
	if err != nil {
		return nil, err
	}
	kwokDir := filepath.Join(filepath.Dir(dir), "kwok")
	root, err := os.MkdirTemp("", clusterDirPrefix)
	if err != nil {
		return nil, fmt.Errorf("creating cluster dir, %w", err)
	}
	c := &Cluster{Root: root, Kubeconfig: filepath.Join(root, "kubeconfig")}
	if err := c.start(ctx, dir, kwokDir); err != nil {
		return nil, errors.Join(err, c.Stop())
	}
	return c, nil
}

func (c *Cluster) start(ctx context.Context, binDir, kwokDir string) error {
	if err := os.WriteFile(filepath.Join(c.Root, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		return fmt.Errorf("writing owner, %w", err)
	}
	logs := filepath.Join(c.Root, "logs")
	if err := os.MkdirAll(logs, 0o750); err != nil {
		return fmt.Errorf("creating log dir, %w", err)
	}
	env, err := startEnvironment(func(e *envtest.Environment) {
		e.ControlPlane.Etcd = &envtest.Etcd{DataDir: mkdir(c.Root, "etcd")}
		api := e.ControlPlane.GetAPIServer()
		api.CertDir = mkdir(c.Root, "apiserver")
		// Told to stop, kube-apiserver would wait for the components' open
		// watches for up to its request timeout, a minute, and envtest
		// kills it after 20 s; this way it drains only the short requests
		// (answering new ones 429 with Retry-After) and gives the watches
		// 2 s, so RestartAPIServer is quick.
		api.Configure().Set("shutdown-send-retry-after", "true")
		api.Configure().Set("service-cluster-ip-range", ServiceCIDR)
	})
	if err != nil {
		return err
	}
	c.Environment = env
	user, err := env.env.ControlPlane.AddUser(envtest.User{Name: "capstan-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return fmt.Errorf("adding admin user, %w", err)
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		return fmt.Errorf("rendering kubeconfig, %w", err)
	}
	if err := os.WriteFile(c.Kubeconfig, kubeconfig, 0o600); err != nil {
		return fmt.Errorf("writing kubeconfig, %w", err)
	}

	schedulerConfig := filepath.Join(c.Root, "scheduler.yaml")
	if err := os.WriteFile(schedulerConfig, []byte(fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %s
leaderElection:
  leaderElect: false
profiles:
- schedulerName: default-scheduler
- schedulerName: %s
`, c.Kubeconfig, SecondSchedulerName)), 0o600); err != nil {
		return fmt.Errorf("writing scheduler config, %w", err)
	}

	type component struct {
		name, path string
		args       []string
		healthPort int
	}
	var components []component
	schedulerPort, err := freePort()
	if err != nil {
		return err
	}
	components = append(components, component{"kube-scheduler", filepath.Join(binDir, "kube-scheduler"), []string{
		"--config=" + schedulerConfig,
		"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(schedulerPort),
		"--authentication-kubeconfig=" + c.Kubeconfig, "--authorization-kubeconfig=" + c.Kubeconfig,
	}, schedulerPort})
	kcmPort, err := freePort()
	if err != nil {
		return err
	}
	components = append(components, component{"kube-controller-manager", filepath.Join(binDir, "kube-controller-manager"), []string{
		"--kubeconfig=" + c.Kubeconfig,
		"--authentication-kubeconfig=" + c.Kubeconfig, "--authorization-kubeconfig=" + c.Kubeconfig,
		"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(kcmPort),
		"--leader-elect=false",
		"--use-service-account-credentials=false",
		"--controllers=deployment,replicaset,job,cronjob,daemonset,statefulset,garbagecollector,nodelifecycle,namespace,disruption,podgc,ttl-after-finished,serviceaccount",
		// kwok renews node leases every 5s (a quarter of 20s), so a node
		// is NotReady 20s after kwok lets it go, never while kwok runs it,
		// nor while the API server is down for up to about 15s (a
		// restart, test/e2e/faults).
		"--node-monitor-period=1s", "--node-monitor-grace-period=20s",
	}, kcmPort})
	kwokPort, err := freePort()
	if err != nil {
		return err
	}
	stages := []string{
		"node/fast/node-initialize.yaml", "node/heartbeat-with-lease/node-heartbeat-with-lease.yaml",
		"pod/general/pod-create.yaml", "pod/general/pod-init-container-running.yaml",
		"pod/general/pod-init-container-completed.yaml", "pod/general/pod-ready.yaml",
		"pod/general/pod-complete.yaml", "pod/general/pod-delete.yaml",
	}
	kwokArgs := []string{
		"--kubeconfig=" + c.Kubeconfig,
		"--manage-all-nodes=false",
		"--manage-nodes-with-label-selector=" + simv1alpha1.LabelKubelet + "=" + simv1alpha1.KubeletKwok,
		"--node-lease-duration-seconds=20",
		"--server-address=127.0.0.1:" + strconv.Itoa(kwokPort),
	}
	for _, s := range stages {
		kwokArgs = append(kwokArgs, "--config="+filepath.Join(kwokDir, "stage", s))
	}
	components = append(components, component{"kwok", filepath.Join(kwokDir, "kwok"), kwokArgs, 0})

	for _, comp := range components {
		p, err := startProcess(logs, comp.name, comp.path, comp.args...)
		if err != nil {
			return err
		}
		c.procs = append(c.procs, p)
	}
	for i, comp := range components {
		if comp.healthPort == 0 {
			continue
		}
		if err := waitHealthy(ctx, c.procs[i], fmt.Sprintf("https://127.0.0.1:%d/healthz", comp.healthPort)); err != nil {
			return err
		}
	}
	return nil
}

// Stop stops every component, then verifies that no process of this
// cluster survived; survivors are killed and reported as an error.
func (c *Cluster) Stop() error {
	var errs []error
	for i := len(c.procs) - 1; i >= 0; i-- {
		errs = append(errs, c.procs[i].stop(5*time.Second))
	}
	if c.Environment != nil {
		errs = append(errs, c.Environment.Stop())
	}
	if pids := ProcessesOf(c.Root); len(pids) > 0 {
		_ = os.Remove(filepath.Join(c.Root, ownerFile))
		killed, err := ReapOrphans()
		errs = append(errs, fmt.Errorf("cluster processes %v outlived Stop (killed %v)", pids, killed), err)
	}
	errs = append(errs, os.RemoveAll(c.Root))
	return errors.Join(errs...)
}

// UserKubeconfig writes a kubeconfig for a user with no groups, so a test
// can run a component with only the RBAC it is bound to.
func (c *Cluster) UserKubeconfig(name string) (string, error) {
	user, err := c.env.ControlPlane.AddUser(envtest.User{Name: name}, nil)
	if err != nil {
		return "", fmt.Errorf("adding user %s, %w", name, err)
	}
	data, err := user.KubeConfig()
	if err != nil {
		return "", fmt.Errorf("rendering kubeconfig of %s, %w", name, err)
	}
	path := filepath.Join(c.Root, name+".kubeconfig")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return "", fmt.Errorf("writing kubeconfig of %s, %w", name, err)
	}
	return path, nil
}

// StartProcess runs another process against the cluster (Capstan's
// controller, in e2e tests): in its own process group, logging to Logs,
// killed by Stop. Its arguments should reference Root (a state file there,
// say) so the reaper can find it should the test binary crash.
func (c *Cluster) StartProcess(name, path string, env []string, args ...string) error {
	p, err := startProcessEnv(c.Logs(), name, path, env, args...)
	if err != nil {
		return err
	}
	c.procs = append(c.procs, p)
	return nil
}

// Exited reports whether the last process started under name has ended,
// and how.
func (c *Cluster) Exited(name string) (bool, error) {
	for i := len(c.procs) - 1; i >= 0; i-- {
		p := c.procs[i]
		if p.name != name {
			continue
		}
		select {
		case <-p.done:
			return true, p.err
		default:
			return false, nil
		}
	}
	return false, fmt.Errorf("no process %s was started", name)
}

// Logs is the directory of the components' logs.
func (c *Cluster) Logs() string { return filepath.Join(c.Root, "logs") }

func mkdir(root, name string) string {
	dir := filepath.Join(root, name)
	_ = os.MkdirAll(dir, 0o700)
	return dir
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port, %w", err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitHealthy polls a component's health url (/healthz, /readyz) until it
// answers ok, the process exits, or a minute passes.
func waitHealthy(ctx context.Context, p *process, url string) error {
	client := &http.Client{
		Timeout:   time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // loopback health check of a self-signed test component
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		if err := p.exited(); err != nil {
			return err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return fmt.Errorf("building health check, %w", err)
		}
		if resp, err := client.Do(req); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s to be healthy, %w; last log lines:\n%s", p.name, ctx.Err(), tail(p.log, 20))
		case <-time.After(200 * time.Millisecond):
		}
	}
}
