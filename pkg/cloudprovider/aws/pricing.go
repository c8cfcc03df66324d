package aws

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/pricing"
	pricingtypes "github.com/aws/aws-sdk-go-v2/service/pricing/types"
)

// Pricing is the part of the AWS Price List API the provider calls;
// *pricing.Client implements it.
type Pricing interface {
	GetProducts(ctx context.Context, in *pricing.GetProductsInput, opts ...func(*pricing.Options)) (*pricing.GetProductsOutput, error)
}

// PricingRegion is the region whose Price List API endpoint serves
// region's prices: the API answers only in a few regions, and the
// reference picks the nearest by the region's prefix
// (pkg/providers/pricing/pricing.go NewAPI): ap-south-1 for ap-*,
// eu-central-1 for eu-*, cn-northwest-1 for China, us-east-1 for the
// rest.
func PricingRegion(region string) string {
	switch {
	case strings.HasPrefix(region, "ap-"):
		return "ap-south-1"
	case strings.HasPrefix(region, "cn-"):
		return "cn-northwest-1"
	case strings.HasPrefix(region, "eu-"):
		return "eu-central-1"
	}
	return "us-east-1"
}

// priceListReachable reports whether the Price List API serves region: it
// has no endpoint GovCloud can reach, so GovCloud keeps the embedded
// table, as the reference skips it (UpdateOnDemandPricing).
func priceListReachable(region string) bool { return !strings.HasPrefix(region, "us-gov-") }

// Currency is the currency of region's prices: the Price List API prices
// China's regions in CNY, the others in USD (the reference's
// onDemandPage).
func Currency(region string) string {
	if strings.HasPrefix(region, "cn-") {
		return "CNY"
	}
	return "USD"
}

// PriceFilter is one TERM_MATCH filter of an on-demand price query:
// Field is a product attribute (productFamily and serviceCode included).
type PriceFilter struct{ Field, Value string }

// OnDemandPriceQueries are the two queries whose products are region's
// Linux on-demand prices, as the reference asks them
// (pkg/providers/pricing/pricing.go fetchOnDemandPricing): the common
// filters, then shared-tenancy instances and, apart, bare metal, which the
// price list files under dedicated tenancy. hack/prices reads the bulk
// price list files with the same filters.
func OnDemandPriceQueries(region string) [][]PriceFilter {
	common := []PriceFilter{
		{"regionCode", region}, {"serviceCode", "AmazonEC2"}, {"preInstalledSw", "NA"},
		{"operatingSystem", "Linux"}, {"capacitystatus", "Used"}, {"marketoption", "OnDemand"},
	}
	with := func(extra ...PriceFilter) []PriceFilter { return append(append([]PriceFilter{}, common...), extra...) }
	return [][]PriceFilter{
		with(PriceFilter{"tenancy", "Shared"}, PriceFilter{"productFamily", "Compute Instance"}),
		with(PriceFilter{"tenancy", "Dedicated"}, PriceFilter{"productFamily", "Compute Instance (bare metal)"}),
	}
}

// onDemandPrices are region's on-demand prices per hour by instance type,
// in Currency(region), from the Price List API.
func onDemandPrices(ctx context.Context, api Pricing, region string) (map[string]float64, error) {
	out := map[string]float64{}
	for _, query := range OnDemandPriceQueries(region) {
		var filters []pricingtypes.Filter
		for _, f := range query {
			filters = append(filters, pricingtypes.Filter{Field: awssdk.String(f.Field), Type: pricingtypes.FilterTypeTermMatch, Value: awssdk.String(f.Value)})
		}
		pages := pricing.NewGetProductsPaginator(api, &pricing.GetProductsInput{
			ServiceCode: awssdk.String("AmazonEC2"), Filters: filters, MaxResults: awssdk.Int32(100),
		})
		found := map[string]float64{}
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				return nil, fmt.Errorf("getting on-demand prices, %w", err)
			}
			for _, item := range page.PriceList {
				name, price, err := parsePrice(item, Currency(region))
				if err != nil {
					return nil, err
				}
				if name != "" && price > 0 {
					found[name] = price
				}
			}
		}
		// Each query answers for some type in every region that sells
		// any: none means the API is not answering for the region.
		if len(found) == 0 {
			return nil, fmt.Errorf("getting on-demand prices, no product matched %v", query)
		}
		maps.Copy(out, found)
	}
	return out, nil
}

// priceListItem is the part of a price list entry Capstan reads: the
// product's instance type and its on-demand terms. The bulk price list
// files (hack/prices) hold the same product and term objects.
type priceListItem struct {
	Product struct {
		Attributes struct {
			InstanceType string `json:"instanceType"`
		} `json:"attributes"`
	} `json:"product"`
	Terms struct {
		OnDemand map[string]OnDemandTerm `json:"OnDemand"`
	} `json:"terms"`
}

// OnDemandTerm is one on-demand offer term of a price list product.
type OnDemandTerm struct {
	PriceDimensions map[string]struct {
		PricePerUnit map[string]string `json:"pricePerUnit"`
	} `json:"priceDimensions"`
}

// HourlyPrice is the term's price in currency; false when it has none.
// A product has one on-demand term with one (hourly) dimension.
func (t OnDemandTerm) HourlyPrice(currency string) (float64, bool, error) {
	for _, dim := range t.PriceDimensions {
		raw, ok := dim.PricePerUnit[currency]
		if !ok {
			continue
		}
		price, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			return 0, false, fmt.Errorf("parsing price %q, %w", raw, err)
		}
		return price, true, nil
	}
	return 0, false, nil
}

// parsePrice is the instance type and its hourly price in currency in a
// price list entry (a JSON document); "" when the entry has none.
func parsePrice(raw, currency string) (string, float64, error) {
	var item priceListItem
	if err := json.Unmarshal([]byte(raw), &item); err != nil {
		return "", 0, fmt.Errorf("decoding a price list entry, %w", err)
	}
	for _, term := range item.Terms.OnDemand {
		price, ok, err := term.HourlyPrice(currency)
		if err != nil {
			return "", 0, fmt.Errorf("price of %s, %w", item.Product.Attributes.InstanceType, err)
		}
		if ok {
			return item.Product.Attributes.InstanceType, price, nil
		}
	}
	return "", 0, nil
}
