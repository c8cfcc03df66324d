package aws

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	"golang.org/x/sync/singleflight"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
)

// Bootstrap is what nodes join: the cluster's API server, its CA bundle
// (base64 PEM, as kubeconfigs and EKS carry it), its service CIDR, and
// the cluster DNS address (the kube-dns Service's ClusterIP; empty, the
// node's own default).
type Bootstrap struct {
	Endpoint    string
	CABundle    string
	ServiceCIDR string
	ClusterDNS  string
}

// Missing names, by the flag that overrides each, what the user data of
// an AMI family needs and b lacks: nodeadm refuses a NodeConfig without
// the endpoint, CA or CIDR (amazon-eks-ami nodeadm/internal/api/validation.go);
// bootstrap.sh and Bottlerocket need the endpoint and CA; a Custom
// family's user data is the user's own.
func (b Bootstrap) Missing(family string) []string {
	var need []string
	switch family {
	case awsv1.AMIFamilyAL2023:
		need = []string{"endpoint", "ca", "cidr"}
	case awsv1.AMIFamilyAL2, awsv1.AMIFamilyBottlerocket:
		need = []string{"endpoint", "ca"}
	}
	var missing []string
	for _, n := range need {
		switch {
		case n == "endpoint" && b.Endpoint == "":
			missing = append(missing, "API server endpoint (--cluster-endpoint)")
		case n == "ca" && b.CABundle == "":
			missing = append(missing, "CA bundle (--cluster-ca-bundle)")
		case n == "cidr" && b.ServiceCIDR == "":
			missing = append(missing, "service CIDR (--service-cidr)")
		}
	}
	return missing
}

// or is b with its empty fields taken from other.
func (b Bootstrap) or(other Bootstrap) Bootstrap {
	pick := func(a, c string) string {
		if a != "" {
			return a
		}
		return c
	}
	return Bootstrap{
		Endpoint: pick(b.Endpoint, other.Endpoint), CABundle: pick(b.CABundle, other.CABundle),
		ServiceCIDR: pick(b.ServiceCIDR, other.ServiceCIDR), ClusterDNS: pick(b.ClusterDNS, other.ClusterDNS),
	}
}

// complete reports whether every field is known: nothing is left to
// discover.
func (b Bootstrap) complete() bool {
	return b.Endpoint != "" && b.CABundle != "" && b.ServiceCIDR != "" && b.ClusterDNS != ""
}

// FromEKS is what an EKS cluster says of itself: its endpoint, CA and
// service CIDR, IPv4 else IPv6, as the reference reads DescribeCluster
// (pkg/operator/operator.go ResolveClusterEndpoint,
// pkg/providers/launchtemplate ResolveClusterCIDR).
func FromEKS(c *ekstypes.Cluster) Bootstrap {
	if c == nil {
		return Bootstrap{}
	}
	b := Bootstrap{Endpoint: awssdk.ToString(c.Endpoint)}
	if c.CertificateAuthority != nil {
		b.CABundle = awssdk.ToString(c.CertificateAuthority.Data)
	}
	if n := c.KubernetesNetworkConfig; n != nil {
		b.ServiceCIDR = awssdk.ToString(n.ServiceIpv4Cidr)
		if b.ServiceCIDR == "" {
			b.ServiceCIDR = awssdk.ToString(n.ServiceIpv6Cidr)
		}
	}
	return b
}

// EKS is the part of the EKS API discovery calls; *eks.Client implements
// it.
type EKS interface {
	DescribeCluster(ctx context.Context, in *eks.DescribeClusterInput, opts ...func(*eks.Options)) (*eks.DescribeClusterOutput, error)
}

// RediscoverAfter is how long an incomplete discovery is kept before
// EKS and the kube-dns Service are asked again; a complete one is kept
// for good (none of it changes in a cluster's life).
const RediscoverAfter = time.Minute

// ClusterDiscovery finds what nodes join: Overrides (the flags) where
// set, the rest from eks:DescribeCluster and the kube-dns Service in
// kube-system. It is safe for concurrent use.
type ClusterDiscovery struct {
	// EKS answers DescribeCluster for Name; nil, nothing is described.
	EKS  EKS
	Name string
	// Services reads the kube-dns Service (an uncached reader: a cached
	// one would watch every Service of the cluster for one).
	Services  client.Reader
	Overrides Bootstrap
	Clock     clock.Clock

	// flight runs one discovery at a time, its callers sharing the answer.
	flight singleflight.Group
	// mu guards the fields below only, never a call: discovery runs
	// outside it, so a slow EKS holds up no caller that has an answer.
	mu sync.Mutex
	// described is EKS's last answer, found and err the last discovery,
	// asked again at expires unless found is complete.
	described Bootstrap
	found     Bootstrap
	err       error
	expires   time.Time
	asked     bool
}

// discovery is one discovery's answer; abandoned when its context ended
// before it did (the answer is then not kept).
type discovery struct {
	found     Bootstrap
	err       error
	abandoned bool
}

// Bootstrap is what nodes join, as far as it is known, and why the rest
// is not: a failed DescribeCluster. A cluster without a kube-dns Service
// is no error (the reference goes without clusterDNS then). Concurrent
// callers share one discovery, run with the first one's context; each
// waits only as long as its own context allows.
func (d *ClusterDiscovery) Bootstrap(ctx context.Context) (Bootstrap, error) {
	for {
		if b, err, ok := d.cached(); ok {
			return b, err
		}
		ch := d.flight.DoChan("discover", func() (any, error) { return d.discover(ctx), nil })
		select {
		case <-ctx.Done():
			return Bootstrap{}, fmt.Errorf("discovering cluster %s, %w", d.Name, ctx.Err())
		case res := <-ch:
			if r := res.Val.(discovery); !r.abandoned || ctx.Err() != nil {
				return r.found, r.err
			}
			// The discovery shared was cut short by its first caller's
			// context, not ours: ask again.
		}
	}
}

// cached is the last discovery while it holds.
func (d *ClusterDiscovery) cached() (Bootstrap, error, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.asked && (d.found.complete() || d.Clock.Now().Before(d.expires)) {
		return d.found, d.err, true
	}
	return Bootstrap{}, nil, false
}

// discover asks EKS and the kube-dns Service for what the flags and EKS's
// last answer leave unknown, and keeps the answer unless ctx ended.
func (d *ClusterDiscovery) discover(ctx context.Context) discovery {
	d.mu.Lock()
	b := d.Overrides.or(d.described)
	d.mu.Unlock()
	var err error
	var described Bootstrap
	if b.Endpoint == "" || b.CABundle == "" || b.ServiceCIDR == "" {
		if described, err = d.describe(ctx); err == nil {
			b = b.or(described)
		}
	}
	if b.ClusterDNS == "" {
		dns, dnsErr := kubeDNS(ctx, d.Services)
		if dnsErr != nil {
			log.FromContext(ctx).V(1).Info("no cluster DNS address for nodes: their own default applies", "reason", dnsErr.Error())
		}
		b.ClusterDNS = dns
	}
	if ctx.Err() != nil {
		return discovery{found: b, err: err, abandoned: true}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err == nil && described != (Bootstrap{}) {
		d.described = described
	}
	d.found, d.err, d.expires, d.asked = b, err, d.Clock.Now().Add(RediscoverAfter), true
	return discovery{found: b, err: err}
}

func (d *ClusterDiscovery) describe(ctx context.Context) (Bootstrap, error) {
	if d.EKS == nil {
		return Bootstrap{}, errors.New("no EKS client to describe the cluster with")
	}
	out, err := d.EKS.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: awssdk.String(d.Name)})
	if err != nil {
		return Bootstrap{}, fmt.Errorf("describing eks cluster %s, %w", d.Name, err)
	}
	b := FromEKS(out.Cluster)
	log.FromContext(ctx).V(1).Info("described the eks cluster", "cluster", d.Name, "endpoint", b.Endpoint, "serviceCIDR", b.ServiceCIDR)
	return b, nil
}

// kubeDNS is the ClusterIP of the kube-dns Service in kube-system, the
// address the reference gives kubelets as clusterDNS
// (pkg/operator/operator.go KubeDNSIP).
func kubeDNS(ctx context.Context, services client.Reader) (string, error) {
	if services == nil {
		return "", errors.New("no client to read the kube-dns Service with")
	}
	svc := &corev1.Service{}
	if err := services.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: "kube-dns"}, svc); err != nil {
		return "", fmt.Errorf("getting service kube-system/kube-dns, %w", err)
	}
	if net.ParseIP(svc.Spec.ClusterIP) == nil {
		return "", fmt.Errorf("service kube-system/kube-dns has no cluster IP (%q)", svc.Spec.ClusterIP)
	}
	return svc.Spec.ClusterIP, nil
}
