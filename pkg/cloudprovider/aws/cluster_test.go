package aws_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/aws"
	"github.com/capstan-dev/capstan/test/ec2endpoint"
)

func TestMissing(t *testing.T) {
	all := aws.Bootstrap{Endpoint: "https://api", CABundle: "Q0E=", ServiceCIDR: "10.100.0.0/16"}
	cases := []struct {
		name   string
		b      aws.Bootstrap
		family string
		want   []string
	}{
		{"AL2023 with everything", all, awsv1.AMIFamilyAL2023, nil},
		{"AL2023 needs the CIDR", aws.Bootstrap{Endpoint: "https://api", CABundle: "Q0E="}, awsv1.AMIFamilyAL2023, []string{"service CIDR (--service-cidr)"}},
		{"AL2023 with nothing", aws.Bootstrap{}, awsv1.AMIFamilyAL2023, []string{"API server endpoint (--cluster-endpoint)", "CA bundle (--cluster-ca-bundle)", "service CIDR (--service-cidr)"}},
		{"AL2 does without the CIDR", aws.Bootstrap{Endpoint: "https://api", CABundle: "Q0E="}, awsv1.AMIFamilyAL2, nil},
		{"Bottlerocket needs the CA", aws.Bootstrap{Endpoint: "https://api"}, awsv1.AMIFamilyBottlerocket, []string{"CA bundle (--cluster-ca-bundle)"}},
		{"Custom needs nothing", aws.Bootstrap{}, awsv1.AMIFamilyCustom, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.b.Missing(tc.family)); diff != "" {
				t.Errorf("missing (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFromEKS(t *testing.T) {
	cases := []struct {
		name string
		c    *ekstypes.Cluster
		want aws.Bootstrap
	}{
		{"IPv4", &ekstypes.Cluster{Endpoint: awssdk.String("https://x.eks"), CertificateAuthority: &ekstypes.Certificate{Data: awssdk.String("Q0E=")},
			KubernetesNetworkConfig: &ekstypes.KubernetesNetworkConfigResponse{ServiceIpv4Cidr: awssdk.String("172.20.0.0/16")}},
			aws.Bootstrap{Endpoint: "https://x.eks", CABundle: "Q0E=", ServiceCIDR: "172.20.0.0/16"}},
		{"IPv6", &ekstypes.Cluster{KubernetesNetworkConfig: &ekstypes.KubernetesNetworkConfigResponse{ServiceIpv6Cidr: awssdk.String("fd00::/108")}},
			aws.Bootstrap{ServiceCIDR: "fd00::/108"}},
		{"still creating", &ekstypes.Cluster{Status: ekstypes.ClusterStatusCreating}, aws.Bootstrap{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, aws.FromEKS(tc.c)); diff != "" {
				t.Errorf("bootstrap (-want +got):\n%s", diff)
			}
		})
	}
}

// counting counts the DescribeCluster calls it passes on.
type counting struct {
	aws.EKS
	calls int
}

func (c *counting) DescribeCluster(ctx context.Context, in *eks.DescribeClusterInput, opts ...func(*eks.Options)) (*eks.DescribeClusterOutput, error) {
	c.calls++
	return c.EKS.DescribeCluster(ctx, in, opts...)
}

// Discovery asks the local endpoint's EKS: the cluster's endpoint, CA and
// service CIDR, the flags overriding each, EKS's ResourceNotFoundException
// for another cluster; an incomplete answer is asked again after
// RediscoverAfter, a complete one never.
func TestClusterDiscovery(t *testing.T) {
	_, described := endpoint(t, ec2endpoint.Options{ClusterName: "prod", ServiceCIDR: "10.100.0.0/16"})
	cases := []struct {
		name      string
		cluster   string
		overrides aws.Bootstrap
		want      aws.Bootstrap
		notFound  bool
	}{
		{"described", "prod", aws.Bootstrap{}, aws.Bootstrap{Endpoint: "https://prod.eks.test", CABundle: "cHJvZCBDQQ==", ServiceCIDR: "10.100.0.0/16"}, false},
		{"the flags override", "prod", aws.Bootstrap{ServiceCIDR: "192.168.0.0/16", ClusterDNS: "192.168.0.10"},
			aws.Bootstrap{Endpoint: "https://prod.eks.test", CABundle: "cHJvZCBDQQ==", ServiceCIDR: "192.168.0.0/16", ClusterDNS: "192.168.0.10"}, false},
		{"another cluster", "other", aws.Bootstrap{Endpoint: "https://mine"}, aws.Bootstrap{Endpoint: "https://mine"}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(time.Now())
			api := &counting{EKS: described.EKS}
			d := &aws.ClusterDiscovery{EKS: api, Name: tc.cluster, Overrides: tc.overrides, Clock: clk}
			got, err := d.Bootstrap(context.Background())
			var nf *ekstypes.ResourceNotFoundException
			if errors.As(err, &nf) != tc.notFound {
				t.Fatalf("error %v, want ResourceNotFoundException: %t", err, tc.notFound)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("bootstrap (-want +got):\n%s", diff)
			}
			_, _ = d.Bootstrap(context.Background())
			clk.Step(aws.RediscoverAfter)
			_, _ = d.Bootstrap(context.Background())
			if want := map[bool]int{true: 2, false: 1}[tc.notFound]; api.calls != want {
				t.Errorf("DescribeCluster asked %d times, want %d", api.calls, want)
			}
		})
	}
}

// blocking holds every DescribeCluster until release is closed, counting
// the calls.
type blocking struct {
	aws.EKS
	calls   atomic.Int32
	started chan struct{}
	release chan struct{}
}

func (b *blocking) DescribeCluster(ctx context.Context, in *eks.DescribeClusterInput, opts ...func(*eks.Options)) (*eks.DescribeClusterOutput, error) {
	b.calls.Add(1)
	b.started <- struct{}{}
	<-b.release
	return b.EKS.DescribeCluster(ctx, in, opts...)
}

// A slow DescribeCluster holds up no caller beyond its own context, and
// callers that wait together share one call: discovery runs outside the
// lock that a launch's template reads under.
func TestClusterDiscoveryWaitsOutsideTheLock(t *testing.T) {
	_, described := endpoint(t, ec2endpoint.Options{ClusterName: "prod", ServiceCIDR: "10.100.0.0/16"})
	api := &blocking{EKS: described.EKS, started: make(chan struct{}, 4), release: make(chan struct{})}
	d := &aws.ClusterDiscovery{EKS: api, Name: "prod", Clock: clocktesting.NewFakeClock(time.Now())}
	type answer struct {
		b   aws.Bootstrap
		err error
	}
	first := make(chan answer, 1)
	go func() {
		b, err := d.Bootstrap(context.Background())
		first <- answer{b, err}
	}()
	<-api.started
	// A caller whose context ends while EKS is slow returns with its
	// context's error, not after EKS.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := d.Bootstrap(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled caller got %v, want context.Canceled", err)
	}
	second := make(chan answer, 1)
	go func() {
		b, err := d.Bootstrap(context.Background())
		second <- answer{b, err}
	}()
	close(api.release)
	want := aws.Bootstrap{Endpoint: "https://prod.eks.test", CABundle: "cHJvZCBDQQ==", ServiceCIDR: "10.100.0.0/16"}
	for _, ch := range []chan answer{first, second} {
		if a := <-ch; a.err != nil || a.b != want {
			t.Errorf("bootstrap %+v, %v; want %+v", a.b, a.err, want)
		}
	}
	if n := api.calls.Load(); n != 1 {
		t.Errorf("DescribeCluster asked %d times, want once for every caller", n)
	}
}

// With every flag set, EKS is never asked: clusters that are not EKS.
func TestClusterDiscoveryOverridesOnly(t *testing.T) {
	flags := aws.Bootstrap{Endpoint: "https://api", CABundle: "Q0E=", ServiceCIDR: "10.96.0.0/12", ClusterDNS: "10.96.0.10"}
	d := &aws.ClusterDiscovery{Name: "kind", Overrides: flags, Clock: clocktesting.NewFakeClock(time.Now())}
	got, err := d.Bootstrap(context.Background())
	if err != nil || got != flags {
		t.Fatalf("bootstrap %+v, %v; want the flags %+v", got, err, flags)
	}
}

// A launch from an AL2023 class while the cluster cannot be described
// launches nothing: the class is not ready; once the flags give what is
// missing, it launches.
func TestCreateNeedsTheCluster(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	api, described := endpoint(t, ec2endpoint.Options{ClusterName: "prod", Clock: clk})
	class := readyNodeClass(t, api, "prod")
	nc := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Labels: map[string]string{v1.NodePoolLabelKey: "web"}}}
	nc.Spec.NodeClassRef = &v1.NodeClassReference{Group: awsv1.Group, Kind: aws.NodeClassKind, Name: class.Name}
	nc.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{{Key: v1.LabelInstanceType, Operator: corev1.NodeSelectorOpIn, Values: []string{"m5.large"}}}
	for _, tc := range []struct {
		name      string
		overrides aws.Bootstrap
		notReady  bool
	}{
		{"no such EKS cluster", aws.Bootstrap{}, true},
		{"the flags give it", aws.Bootstrap{Endpoint: "https://prod.eks.test", CABundle: "cHJvZCBDQQ==", ServiceCIDR: "172.20.0.0/16"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := aws.New(api, aws.Options{Region: "us-west-2", ClusterName: "prod", Clock: clk, NodeClasses: nodeClasses{class.Name: class},
				Cluster: &aws.ClusterDiscovery{EKS: described.EKS, Name: "other", Overrides: tc.overrides, Clock: clk}})
			if err != nil {
				t.Fatal(err)
			}
			_, err = p.Create(context.Background(), nc)
			if cloudprovider.IsNodeClassNotReadyError(err) != tc.notReady || !tc.notReady && err != nil {
				t.Fatalf("error %v, want a NodeClassNotReadyError: %t", err, tc.notReady)
			}
		})
	}
}
