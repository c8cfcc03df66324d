package test

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-dev/capstan/config/rbac"
)

// StartCapstan runs bin/capstan-e2e's controller (capstan built with the
// e2e tag, so with its test-only flags) against the cluster as its
// own user, bound to exactly config/rbac's roles (so a missing permission
// fails the suite), with leader election on in kube-system, its simulated
// cloud's inventory under Root and extra flags args. It returns the URL of
// the controller's metrics.
func (c *Cluster) StartCapstan(args ...string) (string, error) {
	return c.StartCapstanEnv(nil, args...)
}

// StartCapstanEnv is StartCapstan with extra environment variables
// ("KEY=value"), such as a cloud SDK's credentials.
func (c *Cluster) StartCapstanEnv(env []string, args ...string) (string, error) {
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(root, "bin", "capstan-e2e")
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("capstan-e2e binary missing (run `make e2e`, or `go build -tags e2e -o bin/capstan-e2e ./cmd/capstan`), %w", err)
	}
	kubeconfig, err := c.capstanUser()
	if err != nil {
		return "", err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("finding a metrics port, %w", err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	args = append([]string{"controller",
		"--sim-state=" + filepath.Join(c.Root, "sim-state.json"),
		"--leader-elect=true", "--metrics-bind-address=" + addr, "--health-probe-bind-address=0",
	}, args...)
	if err := c.StartProcess("capstan", bin, append([]string{"KUBECONFIG=" + kubeconfig}, env...), args...); err != nil {
		return "", err
	}
	return "http://" + addr + "/metrics", nil
}

// capstanUser creates config/rbac's roles and binds the user capstan to
// each of them: the ClusterRole capstan, the Role capstan in the
// leader-election namespace (the default of --leader-election-namespace,
// which StartCapstan keeps) and, as the controller runs on the simulated
// cloud, the sim kubelet's ClusterRole. Nothing else: a permission missing
// from the generated roles fails the suite.
func (c *Cluster) capstanUser() (string, error) {
	ctx := context.Background()
	roles, err := rbac.Load()
	if err != nil {
		return "", err
	}
	subjects := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: rbac.Controller}}
	var objs []client.Object
	for _, r := range roles.ClusterRoles {
		objs = append(objs, r, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: r.Name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: r.Name},
			Subjects:   subjects,
		})
	}
	for _, r := range roles.Roles {
		objs = append(objs, r, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: r.Name, Namespace: r.Namespace},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: r.Name},
			Subjects:   subjects,
		})
	}
	for _, obj := range objs {
		if err := c.Client.Create(ctx, obj.DeepCopyObject().(client.Object)); err != nil && !apierrors.IsAlreadyExists(err) {
			return "", fmt.Errorf("creating %T %s, %w", obj, obj.GetName(), err)
		}
	}
	return c.UserKubeconfig(rbac.Controller)
}

// CapstanOptions shape an end-to-end package's cluster.
type CapstanOptions struct {
	// Setup runs once the cluster is up, before the controller starts
	// (extra CRDs, say).
	Setup func(*Cluster) error
	// Args are the controller's extra flags.
	Args func(*Cluster) []string
	// Env are the controller's extra environment variables
	// ("KEY=value"), such as a cloud SDK's credentials.
	Env func(*Cluster) []string
}

// MainWithCapstan runs an end-to-end package: one local cluster with
// capstan controller on it for all the package's tests, torn down
// whatever they did; the component logs are named when a test fails. set
// receives the cluster and the controller's metrics URL.
func MainWithCapstan(m *testing.M, opts CapstanOptions, set func(c *Cluster, metricsURL string)) int {
	c, err := StartCluster(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		if err := c.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}()
	if opts.Setup != nil {
		if err := opts.Setup(c); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	var args []string
	if opts.Args != nil {
		args = opts.Args(c)
	}
	var env []string
	if opts.Env != nil {
		env = opts.Env(c)
	}
	metricsURL, err := c.StartCapstanEnv(env, args...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	set(c, metricsURL)
	code := m.Run()
	if code != 0 {
		c.reportLogs(os.Stderr, "capstan", failureLogLines)
	}
	return code
}

// failureLogLines is how much of the controller's log a failed package
// prints: CI keeps only the output, and Stop removes the cluster.
const failureLogLines = 200

// reportLogs keeps the components' logs past Stop, in a directory of
// their own, and prints the last lines of one component's log.
func (c *Cluster) reportLogs(w io.Writer, component string, lines int) {
	kept, err := os.MkdirTemp("", "capstan-e2e-logs-")
	if err == nil {
		err = os.CopyFS(kept, os.DirFS(c.Logs()))
	}
	if err != nil {
		fmt.Fprintf(w, "keeping component logs, %v\n", err)
	} else {
		fmt.Fprintf(w, "component logs: %s\n", kept)
	}
	data, err := os.ReadFile(filepath.Join(c.Logs(), component+".log"))
	if err != nil {
		fmt.Fprintf(w, "reading the %s log, %v\n", component, err)
		return
	}
	all := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	fmt.Fprintf(w, "last %d lines of the %s log:\n%s\n", min(lines, len(all)), component, strings.Join(all[max(0, len(all)-lines):], "\n"))
}
