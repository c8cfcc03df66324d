package aws

import (
	"testing"
)

func TestParsePrice(t *testing.T) {
	cases := []struct {
		name, raw, currency string
		want                string
		price               float64
		err                 bool
	}{
		{"an on-demand entry", `{"product":{"attributes":{"instanceType":"m5.large","regionCode":"us-west-2"}},
			"terms":{"OnDemand":{"ABC.JRTCKXETXF":{"priceDimensions":{"ABC.JRTCKXETXF.6YS6EN2CT7":{"unit":"Hrs","pricePerUnit":{"USD":"0.0960000000"}}}}}}}`, "USD", "m5.large", 0.096, false},
		{"no on-demand terms", `{"product":{"attributes":{"instanceType":"m5.large"}},"terms":{"Reserved":{}}}`, "USD", "", 0, false},
		{"another currency only", `{"product":{"attributes":{"instanceType":"m5.large"}},"terms":{"OnDemand":{"a":{"priceDimensions":{"b":{"pricePerUnit":{"CNY":"0.7"}}}}}}}`, "USD", "", 0, false},
		// China's prices are in CNY (the reference's onDemandPage).
		{"China's currency", `{"product":{"attributes":{"instanceType":"m5.large"}},"terms":{"OnDemand":{"a":{"priceDimensions":{"b":{"pricePerUnit":{"CNY":"0.7"}}}}}}}`, "CNY", "m5.large", 0.7, false},
		{"not JSON", `{"product":`, "USD", "", 0, true},
		{"a price that is no number", `{"product":{"attributes":{"instanceType":"m5.large"}},"terms":{"OnDemand":{"a":{"priceDimensions":{"b":{"pricePerUnit":{"USD":"cheap"}}}}}}}`, "USD", "", 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name, price, err := parsePrice(tc.raw, tc.currency)
			if (err != nil) != tc.err {
				t.Fatalf("error %v, want error %t", err, tc.err)
			}
			if name != tc.want || price != tc.price {
				t.Errorf("got %q at %g, want %q at %g", name, price, tc.want, tc.price)
			}
		})
	}
}

// The Price List API answers in a few regions only; each region is
// priced at the reference's choice (pkg/providers/pricing/pricing.go
// NewAPI), in its currency.
func TestPricingRegion(t *testing.T) {
	for region, want := range map[string][2]string{
		"us-east-1":      {"us-east-1", "USD"},
		"us-west-2":      {"us-east-1", "USD"},
		"ca-central-1":   {"us-east-1", "USD"},
		"sa-east-1":      {"us-east-1", "USD"},
		"ap-northeast-1": {"ap-south-1", "USD"},
		"ap-south-1":     {"ap-south-1", "USD"},
		"eu-west-1":      {"eu-central-1", "USD"},
		"cn-north-1":     {"cn-northwest-1", "CNY"},
		"cn-northwest-1": {"cn-northwest-1", "CNY"},
		"us-gov-west-1":  {"us-east-1", "USD"},
	} {
		if got := [2]string{PricingRegion(region), Currency(region)}; got != want {
			t.Errorf("%s: price list region and currency %v, want %v", region, got, want)
		}
	}
}
