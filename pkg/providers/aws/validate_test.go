package aws

import (
	"encoding/base64"
	"encoding/pem"
	"strings"
	"testing"

	certutil "k8s.io/client-go/util/cert"
)

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
		{name: "reserved ENIs", args: []string{"--cluster-name=prod", "--reserved-enis=2"}},
		{name: "negative reserved ENIs", args: []string{"--cluster-name=prod", "--reserved-enis=-1"}, want: []string{"--reserved-enis must not be negative, got -1"}},
		{name: "nodeclass refresh of 1s", args: []string{"--cluster-name=prod", "--ec2nodeclass-refresh-interval=1s"}, want: []string{"--ec2nodeclass-refresh-interval must be at least 10s, got 1s"}},
		{name: "no interruption wait", args: []string{"--cluster-name=prod", "--interruption-wait=0s"}},
		{name: "a short interruption wait", args: []string{"--cluster-name=prod", "--interruption-wait=1s"}},
		{name: "an interruption wait past SQS's 20s", args: []string{"--cluster-name=prod", "--interruption-wait=21s"},
			want: []string{"--interruption-wait must be whole seconds from 0 to 20s (SQS's WaitTimeSeconds), got 21s"}},
		{name: "an interruption wait of a fraction", args: []string{"--cluster-name=prod", "--interruption-wait=1500ms"}, want: []string{"--interruption-wait must be whole seconds"}},
		{name: "a negative interruption wait", args: []string{"--cluster-name=prod", "--interruption-wait=-1s"}, want: []string{"--interruption-wait must be whole seconds"}},
		{name: "refresh of 1ms", args: []string{"--cluster-name=prod", "--aws-refresh-interval=1ms"}, want: []string{"--aws-refresh-interval must be at least 10s, got 1ms"}},
		{name: "every value parsed", args: []string{"--cluster-name=prod_2-a", "--aws-endpoint=http://127.0.0.1:4566", "--aws-pricing-endpoint=https://api.pricing.us-east-1.amazonaws.com",
			"--aws-sqs-endpoint=https://sqs.us-west-2.amazonaws.com/", "--aws-iam-endpoint=https://iam.amazonaws.com", "--aws-eks-endpoint=https://eks.us-west-2.amazonaws.com",
			"--cluster-endpoint=https://ABC.gr7.us-west-2.eks.amazonaws.com", "--service-cidr=fd00:10:96::/112", "--cluster-ca-bundle=" + caBundle(t, 2), "--isolated-vpc"}},
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
