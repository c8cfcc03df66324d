// Command devcluster starts Capstan's local cluster for a person: etcd,
// kube-apiserver, kube-scheduler (profiles default-scheduler and
// second-scheduler), kube-controller-manager and kwok, the same harness the
// e2e tests use. It prints the KUBECONFIG export and runs until Ctrl-C,
// then tears everything down. With -demo it also runs `capstan controller`
// on the simulated cloud, applies examples/demo and prints a live summary.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/test"
)

func main() {
	demo := flag.Bool("demo", false, "run capstan controller and the example workload")
	flag.Parse()
	if err := run(*demo); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(demo bool) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := test.StartCluster(ctx)
	if err != nil {
		return err
	}
	defer func() {
		if err := c.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}()
	fmt.Printf("local cluster is up; component logs in %s\n", c.Logs())
	fmt.Printf("export KUBECONFIG=%s\n", c.Kubeconfig)
	if demo {
		if err := startDemo(ctx, c); err != nil {
			return err
		}
	}
	fmt.Println("press Ctrl-C to stop")
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(2 * time.Second):
			if demo {
				summary(ctx, c.Client)
			}
		}
	}
}

func startDemo(ctx context.Context, c *test.Cluster) error {
	root, err := test.ModuleRoot()
	if err != nil {
		return err
	}
	if err := c.StartProcess("capstan", filepath.Join(root, "bin", "capstan"), []string{"KUBECONFIG=" + c.Kubeconfig}, "controller",
		"--sim-state="+filepath.Join(c.Root, "sim-state.json"), "--leader-elect=false",
		"--metrics-bind-address=127.0.0.1:0", "--health-probe-bind-address=0"); err != nil {
		return err
	}
	manifests, err := test.ReadManifests("examples/demo/*.yaml")
	if err != nil {
		return err
	}
	for _, m := range manifests {
		if err := c.Client.Create(ctx, m.Object); err != nil {
			return fmt.Errorf("applying %s %s from %s, %w", m.Object.GetKind(), m.Object.GetName(), m.Path, err)
		}
	}
	fmt.Printf("capstan controller is running (log: %s); applied examples/demo\n", filepath.Join(c.Logs(), "capstan.log"))
	return nil
}

// summary prints one line per NodeClaim and the pods' progress.
func summary(ctx context.Context, c client.Client) {
	ncs := &v1.NodeClaimList{}
	pods := &corev1.PodList{}
	if c.List(ctx, ncs) != nil || c.List(ctx, pods, client.InNamespace("default")) != nil {
		return
	}
	running := 0
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning {
			running++
		}
	}
	fmt.Printf("\n%s  pods running %d/%d, nodeclaims %d\n", time.Now().Format(time.TimeOnly), running, len(pods.Items), len(ncs.Items))
	for _, nc := range ncs.Items {
		ready := "launching"
		for _, cond := range nc.Status.Conditions {
			if cond.Type == v1.ConditionTypeReady && cond.Status == "True" {
				ready = "ready"
			}
		}
		fmt.Printf("  %-16s %-12s %-9s %-11s %-18s %s\n", nc.Name, nc.Labels[v1.LabelInstanceType], nc.Labels[v1.CapacityTypeLabelKey], nc.Labels[v1.LabelZone], nc.Status.NodeName, ready)
	}
}
