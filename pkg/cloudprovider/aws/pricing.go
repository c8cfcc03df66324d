package aws

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/pricing"
	pricingtypes "github.com/aws/aws-sdk-go-v2/service/pricing/types"
)

// Pricing is the part of the AWS Price List API the provider calls;
// *pricing.Client implements it.
type Pricing interface {
	GetProducts(ctx context.Context, in *pricing.GetProductsInput, opts ...func(*pricing.Options)) (*pricing.GetProductsOutput, error)
}

// onDemandPrices are the region's Linux, shared-tenancy on-demand prices
// per hour by instance type, from the Price List API.
func onDemandPrices(ctx context.Context, api Pricing, region string) (map[string]float64, error) {
	term := func(field, value string) pricingtypes.Filter {
		return pricingtypes.Filter{Field: awssdk.String(field), Type: pricingtypes.FilterTypeTermMatch, Value: awssdk.String(value)}
	}
	pages := pricing.NewGetProductsPaginator(api, &pricing.GetProductsInput{
		ServiceCode: awssdk.String("AmazonEC2"),
		Filters: []pricingtypes.Filter{
			term("regionCode", region), term("operatingSystem", "Linux"), term("tenancy", "Shared"),
			term("preInstalledSw", "NA"), term("capacitystatus", "Used"), term("licenseModel", "No License required"),
		},
	})
	out := map[string]float64{}
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("getting on-demand prices, %w", err)
		}
		for _, item := range page.PriceList {
			name, price, err := parsePrice(item)
			if err != nil {
				return nil, err
			}
			if name != "" && price > 0 {
				out[name] = price
			}
		}
	}
	return out, nil
}

// priceListItem is the part of a price list entry Capstan reads.
type priceListItem struct {
	Product struct {
		Attributes struct {
			InstanceType string `json:"instanceType"`
		} `json:"attributes"`
	} `json:"product"`
	Terms struct {
		OnDemand map[string]struct {
			PriceDimensions map[string]struct {
				PricePerUnit map[string]string `json:"pricePerUnit"`
			} `json:"priceDimensions"`
		} `json:"OnDemand"`
	} `json:"terms"`
}

// parsePrice is the instance type and its hourly USD price in a price
// list entry (a JSON document); "" when the entry has none.
func parsePrice(raw string) (string, float64, error) {
	var item priceListItem
	if err := json.Unmarshal([]byte(raw), &item); err != nil {
		return "", 0, fmt.Errorf("decoding a price list entry, %w", err)
	}
	for _, term := range item.Terms.OnDemand {
		for _, dim := range term.PriceDimensions {
			usd, ok := dim.PricePerUnit["USD"]
			if !ok {
				continue
			}
			price, err := strconv.ParseFloat(usd, 64)
			if err != nil {
				return "", 0, fmt.Errorf("price %q of %s, %w", usd, item.Product.Attributes.InstanceType, err)
			}
			return item.Product.Attributes.InstanceType, price, nil
		}
	}
	return "", 0, nil
}
