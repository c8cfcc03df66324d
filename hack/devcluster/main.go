// Command devcluster starts Capstan's local cluster for a person: etcd,
// kube-apiserver, kube-scheduler (profiles default-scheduler and
// second-scheduler), kube-controller-manager and kwok, the same harness the
// e2e tests use. It prints the KUBECONFIG export and runs until Ctrl-C,
// then tears everything down.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/capstan-dev/capstan/pkg/test"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run() error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := test.StartCluster(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("local cluster is up; component logs in %s\n", c.Logs())
	fmt.Printf("export KUBECONFIG=%s\n", c.Kubeconfig)
	fmt.Println("press Ctrl-C to stop")
	<-ctx.Done()
	return c.Stop()
}
