package aws

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
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
	want := Options{VMMemoryOverheadPercent: 0.075, RefreshInterval: 5 * time.Minute, NodeClassRefresh: 5 * time.Minute, InterruptionWait: 20 * time.Second}
	if diff := cmp.Diff(want, parsed(t).opts); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
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
