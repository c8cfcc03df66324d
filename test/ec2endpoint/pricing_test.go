package ec2endpoint_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/pricing"
	pricingtypes "github.com/aws/aws-sdk-go-v2/service/pricing/types"
	"github.com/aws/smithy-go"
	"github.com/google/go-cmp/cmp"

	"github.com/capstan-dev/capstan/test/ec2endpoint"
)

func termMatch(field, value string) pricingtypes.Filter {
	return pricingtypes.Filter{Type: pricingtypes.FilterTypeTermMatch, Field: aws.String(field), Value: aws.String(value)}
}

// onDemandPrices pages through GetProducts and reads each item's price
// the way a Karpenter-style provider does.
func onDemandPrices(t *testing.T, c *pricing.Client, filters ...pricingtypes.Filter) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	pager := pricing.NewGetProductsPaginator(c, &pricing.GetProductsInput{ServiceCode: aws.String("AmazonEC2"), Filters: filters, MaxResults: aws.Int32(100)})
	for pager.HasMorePages() {
		page, err := pager.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, raw := range page.PriceList {
			var item struct {
				Product struct{ Attributes struct{ InstanceType string } }
				Terms   struct {
					OnDemand map[string]struct {
						PriceDimensions map[string]struct{ PricePerUnit map[string]string }
					}
				}
			}
			if err := json.Unmarshal([]byte(raw), &item); err != nil {
				t.Fatal(err)
			}
			for _, term := range item.Terms.OnDemand {
				for _, d := range term.PriceDimensions {
					p, err := strconv.ParseFloat(d.PricePerUnit["USD"], 64)
					if err != nil {
						t.Fatal(err)
					}
					out[item.Product.Attributes.InstanceType] = p
				}
			}
		}
	}
	return out
}

func TestOnDemandPricesAreTheCatalogs(t *testing.T) {
	f := newFixture(t, profile())
	c := pricing.New(pricing.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(f.url), RetryMaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", ""), HTTPClient: ec2endpoint.NewHTTPClient(),
	})
	common := []pricingtypes.Filter{
		termMatch("regionCode", "us-west-2"), termMatch("serviceCode", "AmazonEC2"), termMatch("preInstalledSw", "NA"),
		termMatch("operatingSystem", "Linux"), termMatch("capacitystatus", "Used"), termMatch("marketoption", "OnDemand"),
	}
	got := onDemandPrices(t, c, append(common, termMatch("tenancy", "Shared"), termMatch("productFamily", "Compute Instance"))...)
	metal := onDemandPrices(t, c, append(common, termMatch("tenancy", "Dedicated"), termMatch("productFamily", "Compute Instance (bare metal)"))...)
	for k, v := range metal {
		got[k] = v
	}
	cat, err := ec2endpoint.ServedCatalog()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{}
	for _, it := range cat {
		want[it.Name], _ = it.OnDemandPrice("us-west-2")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("prices (-want +got):\n%s", diff)
	}
	if len(metal) == 0 {
		t.Error("no metal prices")
	}
	// The filters matter: without the market option a capacity block's
	// price comes along, without the product family a dedicated
	// instance's stands for metal.
	loose := onDemandPrices(t, c, append(common[:5:5], termMatch("tenancy", "Shared"))...)
	if loose["m5.large"] == want["m5.large"] {
		t.Errorf("without marketoption, m5.large is still %g: the endpoint lists no other market option", loose["m5.large"])
	}
	looseMetal := onDemandPrices(t, c, append(common, termMatch("tenancy", "Dedicated"))...)
	if looseMetal["m5.large"] == 0 {
		t.Error("without productFamily, no dedicated m5.large: the endpoint lists no other tenancy")
	}
	_, err = c.GetProducts(context.Background(), &pricing.GetProductsInput{ServiceCode: aws.String("AmazonS3")})
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode() != "NotFoundException" {
		t.Errorf("another service: %v", err)
	}
}
