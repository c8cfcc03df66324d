package test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/capstan-dev/capstan/api"
	"github.com/capstan-dev/capstan/config/crd"
)

// Environment is a running etcd and kube-apiserver with Capstan's CRDs.
type Environment struct {
	Config *rest.Config
	Client client.Client
	Scheme *runtime.Scheme

	env *envtest.Environment
}

// NewScheme returns a scheme with the Kubernetes types and Capstan's API.
func NewScheme() (*runtime.Scheme, error) { return api.NewScheme() }

// BinaryDir is where `make tools` puts etcd and kube-apiserver:
// $KUBEBUILDER_ASSETS, else bin/k8s at the module root.
func BinaryDir() (string, error) {
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		root, err := ModuleRoot()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(root, "bin", "k8s")
	}
	for _, name := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return "", fmt.Errorf("control-plane binary %s not found in %s (run `make tools`), %w", name, dir, err)
		}
	}
	return dir, nil
}

// ModuleRoot is the directory of Capstan's go.mod, found from the working
// directory upwards (go test runs in the package's directory).
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding module root, %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "hack", "tools.sh")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("finding module root: no go.mod with hack/tools.sh above the working directory")
		}
		dir = parent
	}
}

// StartEnvironment starts etcd and kube-apiserver and installs the CRDs.
// Call Stop when done, also when tests fail (TestMain does).
func StartEnvironment() (*Environment, error) {
	return startEnvironment(func(*envtest.Environment) {})
}

// EnvironmentFor starts an Environment for one test, failing it if the
// control plane does not start, and stops it when the test ends.
func EnvironmentFor(t testing.TB) *Environment {
	t.Helper()
	env, err := StartEnvironment()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Error(err)
		}
	})
	return env
}

func startEnvironment(configure func(*envtest.Environment)) (*Environment, error) {
	dir, err := BinaryDir()
	if err != nil {
		return nil, err
	}
	crds, err := crd.CRDs()
	if err != nil {
		return nil, err
	}
	scheme, err := NewScheme()
	if err != nil {
		return nil, err
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory: dir,
		CRDInstallOptions:     envtest.CRDInstallOptions{CRDs: crds, Scheme: scheme},
		ErrorIfCRDPathMissing: true,
		Scheme:                scheme,
	}
	configure(env)
	cfg, err := env.Start()
	if err != nil {
		return nil, errors.Join(fmt.Errorf("starting control plane, %w", err), env.Stop())
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, errors.Join(fmt.Errorf("building client, %w", err), env.Stop())
	}
	return &Environment{Config: cfg, Client: c, Scheme: scheme, env: env}, nil
}

// Stop stops kube-apiserver and etcd and removes their data.
func (e *Environment) Stop() error {
	if err := e.env.Stop(); err != nil {
		return fmt.Errorf("stopping control plane, %w", err)
	}
	return nil
}
