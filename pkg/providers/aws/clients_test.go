package aws

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/prometheus/client_golang/prometheus"
)

// Each client goes to its own endpoint flag; one not given leaves the
// SDK's, and pricing is asked at the region's Price List endpoint.
func TestClientsEndpoints(t *testing.T) {
	o := Options{Endpoint: "http://ec2.test", PricingEndpoint: "http://pricing.test", IAMEndpoint: "http://iam.test"}
	c, err := newClients(aws.Config{Region: "eu-west-1"}, o, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		got  *string
		want string
	}{
		"ec2":     {c.ec2.Options().BaseEndpoint, "http://ec2.test"},
		"pricing": {c.pricing.Options().BaseEndpoint, "http://pricing.test"},
		"iam":     {c.iam.Options().BaseEndpoint, "http://iam.test"},
		"sqs":     {c.sqs.Options().BaseEndpoint, ""},
		"eks":     {c.eks.Options().BaseEndpoint, ""},
	} {
		if got := aws.ToString(tc.got); got != tc.want {
			t.Errorf("%s endpoint = %q, want %q", name, got, tc.want)
		}
	}
	if r := c.pricing.Options().Region; r != "eu-central-1" {
		t.Errorf("pricing region = %q, want eu-central-1, the Price List endpoint of Europe", r)
	}
	if r := c.ec2.Options().Region; r != "eu-west-1" {
		t.Errorf("ec2 region = %q, want eu-west-1", r)
	}
	if c.ec2.Options().HTTPClient == nil || len(c.eks.Options().APIOptions) == 0 {
		t.Error("the clients share no HTTP client or API metrics")
	}
}
