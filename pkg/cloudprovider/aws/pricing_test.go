package aws

import (
	"testing"
)

func TestParsePrice(t *testing.T) {
	cases := []struct {
		name, raw string
		want      string
		price     float64
		err       bool
	}{
		{"an on-demand entry", `{"product":{"attributes":{"instanceType":"m5.large","regionCode":"us-west-2"}},
			"terms":{"OnDemand":{"ABC.JRTCKXETXF":{"priceDimensions":{"ABC.JRTCKXETXF.6YS6EN2CT7":{"unit":"Hrs","pricePerUnit":{"USD":"0.0960000000"}}}}}}}`, "m5.large", 0.096, false},
		{"no on-demand terms", `{"product":{"attributes":{"instanceType":"m5.large"}},"terms":{"Reserved":{}}}`, "", 0, false},
		{"another currency only", `{"product":{"attributes":{"instanceType":"m5.large"}},"terms":{"OnDemand":{"a":{"priceDimensions":{"b":{"pricePerUnit":{"CNY":"0.7"}}}}}}}`, "", 0, false},
		{"not JSON", `{"product":`, "", 0, true},
		{"a price that is no number", `{"product":{"attributes":{"instanceType":"m5.large"}},"terms":{"OnDemand":{"a":{"priceDimensions":{"b":{"pricePerUnit":{"USD":"cheap"}}}}}}}`, "", 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name, price, err := parsePrice(tc.raw)
			if (err != nil) != tc.err {
				t.Fatalf("error %v, want error %t", err, tc.err)
			}
			if name != tc.want || price != tc.price {
				t.Errorf("got %q at %g, want %q at %g", name, price, tc.want, tc.price)
			}
		})
	}
}
