package aws

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/pricing"
	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	testingclock "k8s.io/utils/clock/testing"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	v1 "github.com/capstan-dev/capstan/api/v1"
)

// recordedPricing answers GetProducts with prices, recording the filters.
type recordedPricing struct {
	queries [][]PriceFilter
	prices  map[string]string
	err     error
}

func (r *recordedPricing) GetProducts(_ context.Context, in *pricing.GetProductsInput, _ ...func(*pricing.Options)) (*pricing.GetProductsOutput, error) {
	var q []PriceFilter
	for _, f := range in.Filters {
		q = append(q, PriceFilter{awssdk.ToString(f.Field), awssdk.ToString(f.Value)})
	}
	r.queries = append(r.queries, q)
	if r.err != nil {
		return nil, r.err
	}
	out := &pricing.GetProductsOutput{}
	for name, price := range r.prices {
		raw, _ := json.Marshal(map[string]any{"product": map[string]any{"attributes": map[string]string{"instanceType": name}},
			"terms": map[string]any{"OnDemand": map[string]any{"t": map[string]any{"priceDimensions": map[string]any{"d": map[string]any{"pricePerUnit": map[string]string{"USD": price}}}}}}})
		out.PriceList = append(out.PriceList, string(raw))
	}
	return out, nil
}

// noNodeClasses has none.
type noNodeClasses struct{}

func (noNodeClasses) EC2NodeClass(context.Context, string) (*awsv1.EC2NodeClass, error) {
	return nil, errors.New("no node classes")
}

// unusedEC2 is an EC2 the price tests never call.
type unusedEC2 struct{ EC2 }

func pricedProvider(t *testing.T, region string, api Pricing, isolated bool) *Provider {
	t.Helper()
	p, err := New(unusedEC2{}, Options{Region: region, ClusterName: "c", Clock: testingclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
		NodeClasses: noNodeClasses{}, Cluster: KnownCluster{}, Pricing: api, IsolatedVPC: isolated})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestOnDemandPrices(t *testing.T) {
	shared := []PriceFilter{{"regionCode", "eu-west-1"}, {"serviceCode", "AmazonEC2"}, {"preInstalledSw", "NA"}, {"operatingSystem", "Linux"},
		{"capacitystatus", "Used"}, {"marketoption", "OnDemand"}, {"tenancy", "Shared"}, {"productFamily", "Compute Instance"}}
	metal := append(append([]PriceFilter{}, shared[:6]...), PriceFilter{"tenancy", "Dedicated"}, PriceFilter{"productFamily", "Compute Instance (bare metal)"})
	cases := []struct {
		name     string
		region   string
		isolated bool
		api      *recordedPricing
		queries  [][]PriceFilter
		want     map[string]float64
	}{
		{"the api over the table: the reference's two queries", "eu-west-1", false, &recordedPricing{prices: map[string]string{"m5.large": "0.107"}},
			[][]PriceFilter{shared, metal}, map[string]float64{"m5.large": 0.107}},
		{"an isolated VPC asks nothing", "eu-west-1", true, &recordedPricing{prices: map[string]string{"m5.large": "0.107"}}, nil, map[string]float64{"m5.large": 0.096}},
		{"GovCloud asks nothing", "us-gov-west-1", false, &recordedPricing{prices: map[string]string{"c5.large": "1"}}, nil, map[string]float64{"c5.large": 0.102}},
		{"a failing api leaves the table", "eu-west-1", false, &recordedPricing{err: errors.New("throttled")}, [][]PriceFilter{shared}, map[string]float64{"m5.large": 0.096}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := pricedProvider(t, tc.region, tc.api, tc.isolated)
			got := p.onDemandPrices(context.Background())
			for name, want := range tc.want {
				if got[name] != want {
					t.Errorf("%s: %g, want %g", name, got[name], want)
				}
			}
			if diff := cmp.Diff(tc.queries, tc.api.queries); diff != "" {
				t.Errorf("queries (-want +got):\n%s", diff)
			}
		})
	}
}

// A type without an on-demand price stays, its on-demand offerings
// unavailable and its spot ones offered; the metric names it.
func TestUnpricedTypeKept(t *testing.T) {
	reg := prometheus.NewRegistry()
	metrics, err := NewPriceMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	p := pricedProvider(t, "us-west-2", nil, true)
	p.opts.PriceMetrics = metrics
	x9 := describe("m5.large")
	x9.InstanceType = "x9.large"
	c := &region{types: map[string]machine{
		"m5.large": {info: describe("m5.large"), zones: map[string]bool{"us-west-2a": true}, spot: true, onDemand: 0.096, priced: true},
		"x9.large": {info: x9, zones: map[string]bool{"us-west-2a": true}, spot: true},
	}, spot: map[string]float64{"x9.large/us-west-2a": 0.03}}
	p.reportUnpriced(context.Background(), c)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var series []string
	for _, f := range families {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				series = append(series, f.GetName()+"/"+l.GetValue()+"="+fmt.Sprint(m.GetGauge().GetValue()))
			}
		}
	}
	if diff := cmp.Diff([]string{"capstan_cloudprovider_aws_unpriced_instance_types/x9.large=1"}, series); diff != "" {
		t.Errorf("metric series (-want +got):\n%s", diff)
	}
	nc := &awsv1.EC2NodeClass{Status: awsv1.EC2NodeClassStatus{Subnets: []awsv1.Subnet{{ID: "subnet-a", Zone: "us-west-2a"}}}}
	available := map[string]map[string]bool{}
	for _, it := range p.instanceTypes(c, nc) {
		available[it.Name] = map[string]bool{}
		for _, o := range it.Offerings {
			available[it.Name][o.CapacityType] = o.IsAvailable()
		}
	}
	want := map[string]map[string]bool{"m5.large": {v1.CapacityTypeOnDemand: true}, "x9.large": {v1.CapacityTypeOnDemand: false, v1.CapacityTypeSpot: true}}
	if diff := cmp.Diff(want, available); diff != "" {
		t.Errorf("offerings available (-want +got):\n%s", diff)
	}
}
