package test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"

	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// MainWithEnvironment runs a test package against one shared control
// plane: it starts etcd and kube-apiserver, hands the environment to set,
// runs the tests and stops the control plane whatever they did. Use it as
// `os.Exit(test.MainWithEnvironment(m, func(e *test.Environment) { env = e }))`.
func MainWithEnvironment(m *testing.M, set func(*Environment)) int {
	log.SetLogger(klog.NewKlogr())
	env, err := StartEnvironment()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	set(env)
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	return code
}

// StartManager runs a manager on env with register's controllers until
// the test ends: no metrics or health endpoints, no leader election.
func StartManager(t *testing.T, env *Environment, register func(manager.Manager) error) manager.Manager {
	t.Helper()
	mgr, err := manager.New(env.Config, manager.Options{
		Scheme:  env.Scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
		// Every test starts its own manager with the same controller names.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := register(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("manager stopped with %v", err)
		}
	})
	return mgr
}
