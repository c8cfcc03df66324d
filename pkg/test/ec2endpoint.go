package test

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-dev/capstan/config/rbac"
)

// EC2EndpointUser is the user bin/ec2endpoint's kubelet registers Nodes
// as.
const EC2EndpointUser = "ec2endpoint"

// EC2EndpointState is the endpoint's simulated inventory under Root.
const EC2EndpointState = "ec2endpoint-state.json"

// StartEC2Endpoint runs bin/ec2endpoint (the local EC2, SQS and Price
// List endpoint over the simulated cloud, built by `make e2e` or `go
// build -o bin/ec2endpoint ./hack/ec2endpoint`) as a process of the
// cluster, with the cloud profile file profile, its inventory in Root
// (EC2EndpointState) and its instances registering Nodes on the cluster
// for kwok, its subnets, security groups and AMIs tagged for clusterName,
// and its EKS cluster clusterName the cluster's own API server, CA and
// ServiceCIDR, so that what Capstan discovers is what nodes must join.
// Its kubelet runs as EC2EndpointUser, bound to the roles the simulated
// cloud's kubelet has in StartCapstan: config/rbac's ClusterRoles
// capstan and capstan-sim-kubelet. flags are the endpoint's further
// flags: with --iam-policy files (CloudFormation templates, as
// docs/iam's), it authorizes every request not signed with
// ec2endpoint.AdminAccessKeyID under their policies;
// --create-fleet-latency makes launches take as long as on EC2. It
// returns the URL the endpoint printed.
func (c *Cluster) StartEC2Endpoint(profile, clusterName string, flags ...string) (string, error) {
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(root, "bin", "ec2endpoint")
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("ec2endpoint binary missing (run `make e2e`, or `go build -o bin/ec2endpoint ./hack/ec2endpoint`), %w", err)
	}
	kubeconfig, err := c.ec2EndpointUser()
	if err != nil {
		return "", err
	}
	args := []string{"--listen=127.0.0.1:0", "--cloud-profile=" + profile, "--sim-state=" + filepath.Join(c.Root, EC2EndpointState),
		"--kubeconfig=" + kubeconfig, "--cluster-name=" + clusterName,
		"--cluster-endpoint=" + c.Config.Host, "--cluster-ca-bundle=" + base64.StdEncoding.EncodeToString(c.Config.CAData), "--service-cidr=" + ServiceCIDR}
	args = append(args, flags...)
	p, err := startProcessEnv(c.Logs(), "ec2endpoint", bin, nil, args...)
	if err != nil {
		return "", err
	}
	c.procs = append(c.procs, p)
	deadline := time.Now().Add(30 * time.Second)
	for {
		data, _ := os.ReadFile(p.log)
		if url, ok := printedURL(string(data)); ok {
			return url, nil
		}
		if err := p.exited(); err != nil {
			return "", err
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("ec2endpoint printed no URL in 30s; last log lines:\n%s", tail(p.log, 20))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// printedURL is the first complete line of log that is a URL: the
// endpoint prints its own first on stdout, which shares the log with its
// stderr.
func printedURL(log string) (string, bool) {
	lines := strings.Split(log, "\n")
	for _, line := range lines[:len(lines)-1] { // the last is not finished
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "http://") || strings.HasPrefix(line, "https://") {
			return line, true
		}
	}
	return "", false
}

// ec2EndpointUser creates config/rbac's ClusterRoles capstan and
// capstan-sim-kubelet (as capstanUser does, so whichever runs first makes
// them), binds EC2EndpointUser to both and returns its kubeconfig. The
// sim kubelet's own ClusterRole covers registering a Node; stopping one
// (simapi.Kubelet.Stop reads and patches it) relies on the controller's.
func (c *Cluster) ec2EndpointUser() (string, error) {
	ctx := context.Background()
	roles, err := rbac.Load()
	if err != nil {
		return "", err
	}
	subjects := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: EC2EndpointUser}}
	var objs []client.Object
	for _, r := range roles.ClusterRoles {
		if r.Name != rbac.Controller && r.Name != rbac.SimKubelet {
			continue
		}
		objs = append(objs, r, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: EC2EndpointUser + "-" + r.Name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: r.Name},
			Subjects:   subjects,
		})
	}
	if len(objs) != 4 {
		return "", fmt.Errorf("config/rbac lacks the ClusterRole %s or %s", rbac.Controller, rbac.SimKubelet)
	}
	for _, obj := range objs {
		if err := c.Client.Create(ctx, obj.DeepCopyObject().(client.Object)); err != nil && !apierrors.IsAlreadyExists(err) {
			return "", fmt.Errorf("creating %T %s, %w", obj, obj.GetName(), err)
		}
	}
	return c.UserKubeconfig(EC2EndpointUser)
}
