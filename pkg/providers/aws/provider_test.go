package aws

import (
	"context"
	"encoding/base64"
	"encoding/pem"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	certutil "k8s.io/client-go/util/cert"
	"sigs.k8s.io/controller-runtime/pkg/client"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	"github.com/capstan-dev/capstan/pkg/test"
	"github.com/capstan-dev/capstan/test/ec2endpoint"
)

func parsed(t *testing.T, args ...string) *Provider {
	t.Helper()
	p := New()
	test.ParseProviderFlags(t, p, args...)
	return p
}

func TestFlagDefaults(t *testing.T) {
	want := Options{VMMemoryOverheadPercent: 0.075, RefreshInterval: 5 * time.Minute}
	if diff := cmp.Diff(want, parsed(t).opts); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want []string // substrings of the error; none means valid
	}{
		{name: "a cluster name", args: []string{"--cluster-name=prod"}},
		{name: "no cluster name", want: []string{"--cluster-name is required with --cloud-provider=aws"}},
		{name: "no overhead", args: []string{"--cluster-name=prod", "--vm-memory-overhead-percent=0"}},
		{name: "negative overhead", args: []string{"--cluster-name=prod", "--vm-memory-overhead-percent=-0.1"}, want: []string{"--vm-memory-overhead-percent -0.1 is not in [0, 1)"}},
		{name: "no refresh", args: []string{"--cluster-name=prod", "--aws-refresh-interval=0s"}, want: []string{"--aws-refresh-interval must be positive, got 0s"}},
		{name: "every error", args: []string{"--vm-memory-overhead-percent=1", "--aws-refresh-interval=-1s"},
			want: []string{"--cluster-name", "--vm-memory-overhead-percent", "--aws-refresh-interval"}},
		{name: "overhead NaN", args: []string{"--cluster-name=prod", "--vm-memory-overhead-percent=NaN"}, want: []string{"--vm-memory-overhead-percent NaN is not in [0, 1)"}},
		{name: "overhead Inf", args: []string{"--cluster-name=prod", "--vm-memory-overhead-percent=-Inf"}, want: []string{"--vm-memory-overhead-percent -Inf is not in [0, 1)"}},
		{name: "refresh of 1ms", args: []string{"--cluster-name=prod", "--aws-refresh-interval=1ms"}, want: []string{"--aws-refresh-interval must be at least 10s, got 1ms"}},
		{name: "every value parsed", args: []string{"--cluster-name=prod_2-a", "--aws-endpoint=http://127.0.0.1:4566", "--aws-pricing-endpoint=https://api.pricing.us-east-1.amazonaws.com",
			"--aws-sqs-endpoint=https://sqs.us-west-2.amazonaws.com/", "--aws-iam-endpoint=https://iam.amazonaws.com", "--aws-eks-endpoint=https://eks.us-west-2.amazonaws.com",
			"--cluster-endpoint=https://ABC.gr7.us-west-2.eks.amazonaws.com", "--service-cidr=fd00:10:96::/112", "--cluster-ca-bundle=" + caBundle(t, 2)}},
		{name: "a 100-character cluster name", args: []string{"--cluster-name=" + strings.Repeat("a", 100)}},
		{name: "a 101-character cluster name", args: []string{"--cluster-name=" + strings.Repeat("a", 101)}, want: []string{"--cluster-name", "is not a cluster name"}},
		{name: "a cluster name with control characters", args: []string{"--cluster-name=prod\x1b[2J"}, want: []string{`--cluster-name "prod\x1b[2J" is not a cluster name`}},
		{name: "a cluster name with a dot", args: []string{"--cluster-name=prod.eu"}, want: []string{"--cluster-name", "is not a cluster name"}},
		{name: "a cluster name starting with a hyphen", args: []string{"--cluster-name=-prod"}, want: []string{"--cluster-name", "is not a cluster name"}},
		{name: "an endpoint that is no URL", args: []string{"--cluster-name=prod", "--aws-endpoint=localhost:4566"}, want: []string{`--aws-endpoint "localhost:4566" is not an absolute http or https URL with a host`}},
		{name: "an endpoint without a host", args: []string{"--cluster-name=prod", "--aws-eks-endpoint=https:///x"}, want: []string{"--aws-eks-endpoint", "with a host"}},
		{name: "an endpoint that does not parse", args: []string{"--cluster-name=prod", "--aws-sqs-endpoint=http://[::1"}, want: []string{"--aws-sqs-endpoint", "is not a URL"}},
		{name: "a cluster endpoint over ftp", args: []string{"--cluster-name=prod", "--cluster-endpoint=ftp://api.example.com"}, want: []string{"--cluster-endpoint", "http or https"}},
		{name: "every endpoint wrong", args: []string{"--cluster-name=prod", "--aws-endpoint=x", "--aws-pricing-endpoint=x", "--aws-sqs-endpoint=x", "--aws-iam-endpoint=x", "--aws-eks-endpoint=x", "--cluster-endpoint=x"},
			want: []string{"--aws-endpoint", "--aws-pricing-endpoint", "--aws-sqs-endpoint", "--aws-iam-endpoint", "--aws-eks-endpoint", "--cluster-endpoint"}},
		{name: "a service cidr that is an address", args: []string{"--cluster-name=prod", "--service-cidr=10.100.0.1"}, want: []string{`--service-cidr "10.100.0.1" is not a CIDR`}},
		{name: "a service cidr of garbage", args: []string{"--cluster-name=prod", "--service-cidr=ten/16"}, want: []string{"--service-cidr", "is not a CIDR"}},
		{name: "a ca bundle that is not base64", args: []string{"--cluster-name=prod", "--cluster-ca-bundle=-----BEGIN"}, want: []string{"--cluster-ca-bundle is not base64"}},
		{name: "a ca bundle that is not pem", args: []string{"--cluster-name=prod", "--cluster-ca-bundle=" + base64.StdEncoding.EncodeToString([]byte("hello"))}, want: []string{"--cluster-ca-bundle holds no PEM certificate"}},
		{name: "a ca bundle with a key", args: []string{"--cluster-name=prod", "--cluster-ca-bundle=" + base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte("k")}))},
			want: []string{`--cluster-ca-bundle holds a PEM "PRIVATE KEY" block`}},
		{name: "a ca bundle whose certificate does not parse", args: []string{"--cluster-name=prod", "--cluster-ca-bundle=" + base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("junk")}))},
			want: []string{"--cluster-ca-bundle certificate 1 does not parse"}},
		{name: "a ca bundle with a trailer", args: []string{"--cluster-name=prod", "--cluster-ca-bundle=" + caBundle(t, 1, "trailing junk")},
			want: []string{"--cluster-ca-bundle holds more than PEM certificates after certificate"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := parsed(t, tc.args...).Validate()
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			for _, w := range tc.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("Validate() = %v, want it to contain %q", err, w)
				}
			}
		})
	}
}

// start is the fake clock's now.
var start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// isolate keeps the SDK from reading the machine's AWS configuration.
func isolate(t *testing.T) {
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID": "AKIDTEST", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_EC2_METADATA_DISABLED": "true",
		"AWS_CONFIG_FILE": "/dev/null", "AWS_SHARED_CREDENTIALS_FILE": "/dev/null", "AWS_REGION": "", "AWS_DEFAULT_REGION": "",
	} {
		t.Setenv(k, v)
	}
}

func TestStartNeedsARegion(t *testing.T) {
	isolate(t)
	p := parsed(t, "--cluster-name=test")
	if _, err := p.Start(context.Background(), test.ProviderEnv(nil, start)); err == nil || !strings.Contains(err.Error(), "no aws region") {
		t.Errorf("Start() = %v, want a no aws region error", err)
	}
}

// Started on a manager against a local EC2 endpoint, the provider's cloud
// is AWS and its controllers run: an EC2NodeClass is resolved to Ready.
func TestStartRegistersTheNodeClassController(t *testing.T) {
	isolate(t)
	g := test.NewGomega(t)
	ctx := context.Background()
	s, err := ec2endpoint.New(ec2endpoint.Options{ClusterName: "test", Profile: &simv1alpha1.CloudProfile{Spec: simv1alpha1.CloudProfileSpec{
		Region: "us-west-2", Zones: []string{"us-west-2a", "us-west-2b"}, Style: simv1alpha1.CloudStyleAWS,
	}}, ClusterEndpoint: "https://test.eks.test", ClusterCABundle: "Q0E="})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	p := parsed(t, "--aws-region=us-west-2", "--cluster-name=test", "--aws-endpoint="+hs.URL, "--aws-pricing-endpoint="+hs.URL,
		"--aws-sqs-endpoint="+hs.URL, "--aws-iam-endpoint="+hs.URL, "--aws-eks-endpoint="+hs.URL)

	test.StartProvider(t, env, p, start)

	nc := &awsv1.EC2NodeClass{}
	nc.Name = test.RandomName("ec2nodeclass")
	nc.Spec = awsv1.EC2NodeClassSpec{
		SubnetSelectorTerms:        []awsv1.SubnetSelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "test"}}},
		SecurityGroupSelectorTerms: []awsv1.SecurityGroupSelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "test"}}},
		AMISelectorTerms:           []awsv1.AMISelectorTerm{{Alias: "al2023@latest"}},
		Role:                       "KarpenterNodeRole-test",
	}
	g.Expect(env.Client.Create(ctx, nc)).To(gomega.Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), nc) })
	g.Eventually(func(g gomega.Gomega) {
		got := &awsv1.EC2NodeClass{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(nc), got)).To(gomega.Succeed())
		ready := meta.FindStatusCondition(got.Status.Conditions, awsv1.ConditionTypeReady)
		g.Expect(ready).NotTo(gomega.BeNil())
		g.Expect(ready.Message).To(gomega.BeEmpty())
		g.Expect(string(ready.Status)).To(gomega.Equal("True"))
	}).Should(gomega.Succeed())
}

// caBundle is base64 of n self-signed PEM certificate chains, then
// trailer.
func caBundle(t *testing.T, n int, trailer ...string) string {
	t.Helper()
	var b []byte
	for range n {
		crt, _, err := certutil.GenerateSelfSignedCertKey("ca.example.com", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, crt...)
	}
	for _, s := range trailer {
		b = append(b, s...)
	}
	return base64.StdEncoding.EncodeToString(b)
}
