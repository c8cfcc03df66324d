package ec2endpoint_test

import (
	"context"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
	"github.com/capstan-dev/capstan/test/ec2endpoint"
)

// profile is a small aws-style cloud: two zones, a targeted reservation
// of one m5.large in us-west-2a and an open one of two m5.xlarge in
// us-west-2b; mods change it.
func profile(mods ...func(*simv1alpha1.CloudProfileSpec)) *simv1alpha1.CloudProfile {
	p := &simv1alpha1.CloudProfile{Spec: simv1alpha1.CloudProfileSpec{
		Region: "us-west-2", Zones: []string{"us-west-2a", "us-west-2b"}, Style: simv1alpha1.CloudStyleAWS,
		LaunchLatency: metav1.Duration{Duration: 2 * time.Second},
		Reservations: []simv1alpha1.Reservation{
			{ID: "cr-small", InstanceType: "m5.large", Zone: "us-west-2a", Count: 1, Type: simv1alpha1.ReservationTypeTargeted, OwnerID: "111122223333", Tags: map[string]string{"team": "ml"}},
			{ID: "cr-open", InstanceType: "m5.xlarge", Zone: "us-west-2b", Count: 2, Type: simv1alpha1.ReservationTypeOpen, OwnerID: "111122223333"},
		},
	}}
	for _, m := range mods {
		m(&p.Spec)
	}
	return p
}

// fixture is an endpoint on a test server and an SDK client for it.
type fixture struct {
	server  *ec2endpoint.Server
	client  *ec2.Client
	clock   *clocktesting.FakeClock
	kubelet *sim.MemoryKubelet
	url     string
}

func newFixture(t *testing.T, p *simv1alpha1.CloudProfile, mods ...func(*ec2endpoint.Options)) *fixture {
	t.Helper()
	f := &fixture{clock: clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), kubelet: sim.NewMemoryKubelet()}
	opts := ec2endpoint.Options{Profile: p, Clock: f.clock, Kubelet: f.kubelet, ClusterName: "test-cluster"}
	for _, mod := range mods {
		mod(&opts)
	}
	s, err := ec2endpoint.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	f.server, f.url = s, srv.URL
	f.client = ec2.New(ec2.Options{
		Region: "us-west-2", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", ""), RetryMaxAttempts: 1,
		HTTPClient: ec2endpoint.NewHTTPClient(),
	})
	return f
}

// apiCode is the AWS error code an SDK call failed with, "" for none.
func apiCode(t *testing.T, err error) string {
	t.Helper()
	if err == nil {
		return ""
	}
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("want an AWS API error, got %v", err)
	}
	return apiErr.ErrorCode()
}

func filter(name string, values ...string) ec2types.Filter {
	return ec2types.Filter{Name: aws.String(name), Values: values}
}

func TestErrorsCarryAWSCodes(t *testing.T) {
	f := newFixture(t, profile())
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		call func() error
		want string
	}{
		{"malformed instance id", func() error {
			_, err := f.client.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{"not-an-id"}})
			return err
		}, "InvalidInstanceID.Malformed"},
		{"unknown instance", func() error {
			_, err := f.client.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{"i-0123456789abcdef0"}})
			return err
		}, "InvalidInstanceID.NotFound"},
		{"ids with max results", func() error {
			_, err := f.client.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{"i-0123456789abcdef0"}, MaxResults: aws.Int32(5)})
			return err
		}, "InvalidParameterCombination"},
		{"unknown filter", func() error {
			_, err := f.client.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{Filters: []ec2types.Filter{filter("colour", "blue")}})
			return err
		}, "InvalidParameterValue"},
		{"max results out of range", func() error {
			_, err := f.client.DescribeInstanceTypes(ctx, &ec2.DescribeInstanceTypesInput{MaxResults: aws.Int32(1000)})
			return err
		}, "InvalidParameterValue"},
		{"bad next token", func() error {
			_, err := f.client.DescribeInstanceTypes(ctx, &ec2.DescribeInstanceTypesInput{NextToken: aws.String("garbage")})
			return err
		}, "InvalidParameterValue"},
		{"dry run", func() error {
			_, err := f.client.DescribeAvailabilityZones(ctx, &ec2.DescribeAvailabilityZonesInput{DryRun: aws.Bool(true)})
			return err
		}, "DryRunOperation"},
		{"no error", func() error {
			_, err := f.client.DescribeAvailabilityZones(ctx, &ec2.DescribeAvailabilityZonesInput{})
			return err
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := apiCode(t, tc.call()); got != tc.want {
				t.Errorf("code %q, want %q", got, tc.want)
			}
		})
	}
}

// ec2Error is EC2's error document, decoded independently of the SDK.
type ec2Error struct {
	Code      string `xml:"Errors>Error>Code"`
	Message   string `xml:"Errors>Error>Message"`
	RequestID string `xml:"RequestID"`
}

func TestUnknownActionIsInvalidAction(t *testing.T) {
	f := newFixture(t, profile())
	for _, tc := range []struct {
		form url.Values
		want ec2Error
	}{
		{url.Values{"Action": {"RunInstances"}, "Version": {"2016-11-15"}}, ec2Error{Code: "InvalidAction", Message: "The action RunInstances is not valid for this web service."}},
		{url.Values{"Version": {"2016-11-15"}}, ec2Error{Code: "MissingAction", Message: "The request must contain the parameter Action"}},
	} {
		resp, err := http.Post(f.url, "application/x-www-form-urlencoded", strings.NewReader(tc.form.Encode()))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		var got ec2Error
		if err := xml.Unmarshal(body, &got); err != nil {
			t.Fatalf("decoding %s: %v", body, err)
		}
		if resp.StatusCode != http.StatusBadRequest || got.RequestID == "" || got.RequestID != resp.Header.Get("x-amzn-RequestId") {
			t.Errorf("status %d, request id %q (header %q)", resp.StatusCode, got.RequestID, resp.Header.Get("x-amzn-RequestId"))
		}
		got.RequestID = ""
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("error (-want +got):\n%s", diff)
		}
	}
}

func TestSuccessDocumentShape(t *testing.T) {
	f := newFixture(t, profile())
	form := url.Values{"Action": {"DescribeAvailabilityZones"}, "Version": {"2016-11-15"}}
	resp, err := http.PostForm(f.url, form)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var doc struct {
		XMLName   xml.Name
		RequestID string   `xml:"requestId"`
		Zones     []string `xml:"availabilityZoneInfo>item>zoneName"`
	}
	if err := xml.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	want := xml.Name{Space: "http://ec2.amazonaws.com/doc/2016-11-15/", Local: "DescribeAvailabilityZonesResponse"}
	if doc.XMLName != want || doc.RequestID == "" || !cmp.Equal(doc.Zones, []string{"us-west-2a", "us-west-2b"}) {
		t.Errorf("document %+v", doc)
	}
}

func TestNewRefusesOtherStyles(t *testing.T) {
	_, err := ec2endpoint.New(ec2endpoint.Options{Profile: profile(func(s *simv1alpha1.CloudProfileSpec) {
		s.Style, s.Zones = simv1alpha1.CloudStyleGCP, []string{"us-west-2-a"}
	})})
	if err == nil || !strings.Contains(err.Error(), "aws style") {
		t.Errorf("New with a gcp profile: %v", err)
	}
}

func TestDefaultProfile(t *testing.T) {
	s, err := ec2endpoint.New(ec2endpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	if got := len(s.Cloud().Reservations()); got != 2 {
		t.Errorf("the default profile's reservations: %d, want 2", got)
	}
}
