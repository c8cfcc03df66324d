//go:build e2e

package aws

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/capstan-dev/capstan/pkg/test"
	"github.com/capstan-dev/capstan/test/ec2endpoint"
)

var cluster *test.Cluster

// metricsURL is where the controller serves Prometheus metrics.
var metricsURL string

// api is an EC2 client of the endpoint, for what the scenarios check in
// the cloud and the leaked instance they launch; events an SQS client of
// its interruption queue, named for the cluster.
var (
	api    *ec2.Client
	events *sqs.Client
)

// clusterName is the cluster the endpoint tags its subnets, security
// groups and AMI for, and the controller's --cluster-name.
const clusterName = "capstan-e2e"

// kubernetesVersion is the cluster's version as its API server reports
// it, which the EC2NodeClass controller resolves AMI aliases for. A
// kube-apiserver built without version stamping (hack/tools.sh builds
// them so) reports v0.0.0-master, for which EKS publishes no images.
var kubernetesVersion string

// clusterDNS is the kube-dns Service's address, in test.ServiceCIDR.
const clusterDNS = "172.20.0.10"

// region is testdata/cloud-profile.yaml's.
const region = "us-west-2"

// policyEnv names the controller policy file (docs/iam) the endpoint
// enforces on the controller's requests; unset, it enforces none. `make
// e2e` runs the suite once per policy.
const policyEnv = "CAPSTAN_E2E_IAM_POLICY"

// Compressed timings: batches as the other suites', disruption evaluated
// every second and carried out two seconds later, garbage collection
// every 5 s for instances 10 s old (a minute each by default), and the
// catalog (types, prices, reservations) reloaded every 10 s.
const (
	gcInterval = 5 * time.Second
	gcGrace    = 10 * time.Second
	// launchTimeout deletes a NodeClaim EC2 keeps refusing after 15 s
	// (5 minutes by default).
	launchTimeout = 15 * time.Second
	// fleetLatency is how long each CreateFleet takes: an instant fleet
	// takes a second or more on EC2.
	fleetLatency = time.Second
	// interruptionWait is how long a read of the interruption queue waits
	// for a message (20 s by default): a poll blocked that long would
	// hold the controller's status checks back as long.
	interruptionWait = time.Second
)

// scenarios is how many tests run at once unless -parallel says
// otherwise: all of them (they mostly wait on the cluster).
const scenarios = 8

func TestMain(m *testing.M) {
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		_ = flag.Set("test.parallel", strconv.Itoa(scenarios))
	}
	log.SetLogger(klog.NewKlogr()) // the invariant checker's watching clients log through it
	profile, _ := filepath.Abs("testdata/cloud-profile.yaml")
	var url string
	os.Exit(test.MainWithCapstan(m, test.CapstanOptions{
		Setup: func(c *test.Cluster) error {
			dc, err := discovery.NewDiscoveryClientForConfig(c.Config)
			if err != nil {
				return err
			}
			v, err := dc.ServerVersion()
			if err != nil {
				return fmt.Errorf("reading the cluster's version, %w", err)
			}
			kubernetesVersion = v.GitVersion
			// The cluster DNS address nodes are given, as EKS's CoreDNS
			// add-on serves it: the kube-dns Service.
			dns := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "kube-dns"}, Spec: corev1.ServiceSpec{
				ClusterIP: clusterDNS, Ports: []corev1.ServicePort{{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP}}}}
			if err := c.Client.Create(context.Background(), dns); err != nil {
				return fmt.Errorf("creating the kube-dns Service, %w", err)
			}
			// Each CreateFleet takes fleetLatency, as on EC2, so a launch
			// that holds up the others shows in the scenarios' timings
			// (Pending bounds).
			flags := []string{"--create-fleet-latency=" + fleetLatency.String()}
			if f := os.Getenv(policyEnv); f != "" {
				flags = append(flags, "--iam-policy="+f)
			}
			url, err = c.StartEC2Endpoint(profile, clusterName, flags...)
			if err != nil {
				return fmt.Errorf("starting the EC2 endpoint, %w", err)
			}
			// The scenarios' own calls are the administrator's; the
			// controller's (AKIDE2E) are the ones the policy restricts.
			api = ec2.New(ec2.Options{
				Region: region, BaseEndpoint: awssdk.String(url), HTTPClient: ec2endpoint.NewHTTPClient(),
				Credentials: credentials.NewStaticCredentialsProvider(ec2endpoint.AdminAccessKeyID, "e2e-secret", ""),
			})
			events = sqs.New(sqs.Options{
				Region: region, BaseEndpoint: awssdk.String(url), HTTPClient: ec2endpoint.NewHTTPClient(),
				Credentials: credentials.NewStaticCredentialsProvider(ec2endpoint.AdminAccessKeyID, "e2e-secret", ""),
			})
			_, err = api.DescribeAvailabilityZones(context.Background(), &ec2.DescribeAvailabilityZonesInput{})
			return err
		},
		Args: func(c *test.Cluster) []string {
			return []string{"--cloud-provider=aws", "--aws-endpoint=" + url, "--aws-pricing-endpoint=" + url,
				"--aws-sqs-endpoint=" + url, "--aws-iam-endpoint=" + url, "--aws-eks-endpoint=" + url, "--aws-ssm-endpoint=" + url, "--interruption-queue=" + clusterName,
				"--interruption-wait=" + interruptionWait.String(),
				"--aws-region=" + region, "--cluster-name=" + clusterName, "--aws-refresh-interval=10s", "--ec2nodeclass-refresh-interval=10s",
				"--batch-idle-duration=500ms", "--batch-max-duration=2s",
				"--disruption-poll-interval=1s", "--disruption-validation-delay=2s",
				"--gc-interval=" + gcInterval.String(), "--gc-grace=" + gcGrace.String(), "--launch-timeout=" + launchTimeout.String()}
		},
		// Dummy credentials (the endpoint checks no signature, only the
		// access key, to tell the controller from the scenarios) and no
		// instance metadata lookups: the SDK must never reach for real
		// AWS.
		Env: func(*test.Cluster) []string {
			return []string{"AWS_ACCESS_KEY_ID=AKIDE2E", "AWS_SECRET_ACCESS_KEY=e2e-secret", "AWS_EC2_METADATA_DISABLED=true",
				"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null"}
		},
	}, func(c *test.Cluster, metrics string) { cluster, metricsURL = c, metrics }))
}
