package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim/simapi"
	"github.com/capstan-dev/capstan/test/ec2endpoint"
)

func main() {
	// Why an instance's node does not join, among others, is logged.
	log.SetLogger(klog.NewKlogr())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "ec2endpoint:", err)
		os.Exit(1)
	}
}

// run serves until ctx ends, after writing the URL it listens on to out.
func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("ec2endpoint", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on; port 0 picks a free one")
	profile := fs.String("cloud-profile", "", "the simulated cloud's CloudProfile file (default: the embedded default profile)")
	state := fs.String("sim-state", "", "the simulated cloud's inventory file, kept across restarts (default: in memory)")
	kubeconfig := fs.String("kubeconfig", "", "cluster the launched instances register their Nodes on (default: none, Nodes are kept in memory)")
	cluster := fs.String("cluster-name", ec2endpoint.DefaultClusterName, "cluster name the synthesized subnets, security groups and AMI are tagged for (karpenter.sh/discovery)")
	metadataTags := fs.Bool("instance-metadata-tags", false, "the account's default puts instance tags in instance metadata, so tag keys with / are refused unless the launch template disables it")
	fleetLatency := fs.Duration("create-fleet-latency", 0, "how long each CreateFleet takes to answer, requests waiting side by side as on EC2, where an instant fleet takes seconds (default: at once)")
	omitPlacement := fs.Bool("omit-fleet-instance-placement", false, "answer CreateFleet without the instances' subnetId and zone, as EC2 did before its model had them")
	var policies [][]byte
	fs.Func("iam-policy", "a CloudFormation template of the caller's IAM policies (docs/iam); repeatable. Every request not signed with access key "+
		ec2endpoint.AdminAccessKeyID+" is then authorized under them (default: none, every request is allowed)", func(path string) error {
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		policies = append(policies, data)
		return nil
	})
	clusterEndpoint := fs.String("cluster-endpoint", "", "the EKS cluster's API server URL, as DescribeCluster answers it (default: none, the cluster is still CREATING)")
	clusterCA := fs.String("cluster-ca-bundle", "", "the EKS cluster's base64 PEM CA bundle, as DescribeCluster answers it")
	serviceCIDR := fs.String("service-cidr", "", "the EKS cluster's service CIDR (default: 172.20.0.0/16, EKS's pick for the endpoint's VPC)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	opts := ec2endpoint.Options{StatePath: *state, ClusterName: *cluster, InstanceMetadataTags: *metadataTags, OmitFleetInstancePlacement: *omitPlacement,
		PolicyTemplates: policies, ClusterEndpoint: *clusterEndpoint, ClusterCABundle: *clusterCA, ServiceCIDR: *serviceCIDR,
		CreateFleetLatency: *fleetLatency}
	if *profile != "" {
		p, err := sim.LoadProfile(*profile)
		if err != nil {
			return err
		}
		opts.Profile = p
	}
	if *kubeconfig != "" {
		k, err := apiKubelet(*kubeconfig)
		if err != nil {
			return err
		}
		opts.Kubelet = k
	}
	srv, err := ec2endpoint.New(opts)
	if err != nil {
		return err
	}
	defer func() { _ = srv.Close() }()
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", *listen)
	if err != nil {
		return fmt.Errorf("listening on %s, %w", *listen, err)
	}
	if _, err := fmt.Fprintf(out, "http://%s\n", ln.Addr()); err != nil {
		_ = ln.Close()
		return fmt.Errorf("writing the URL, %w", err)
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("serving, %w", err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(shutdown); err != nil {
		return fmt.Errorf("shutting down, %w", err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving, %w", err)
	}
	return nil
}

// apiKubelet registers Nodes on the cluster of the kubeconfig, as the sim
// provider does in e2e.
func apiKubelet(kubeconfig string) (*simapi.Kubelet, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig %s, %w", kubeconfig, err)
	}
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("building the scheme, %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("creating a client for %s, %w", kubeconfig, err)
	}
	return &simapi.Kubelet{Client: c, Clock: clock.RealClock{}}, nil
}
