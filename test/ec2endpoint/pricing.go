package ec2endpoint

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/capstan-dev/capstan/pkg/cloudprovider/catalog"
)

// The Price List API's GetProducts on the endpoint's listener: for each
// catalog type sold in the profile's region, its Linux on-demand product
// at the catalog's on-demand price (the price the simulated cloud bills),
// and, as the real catalogue lists them beside it, the same type under
// other terms at other prices: dedicated tenancy, Windows, SQL Server
// pre-installed, an unused capacity reservation and a capacity block
// (the AmazonEC2 offer file's tenancy, operatingSystem, preInstalledSw,
// capacitystatus and marketoption attributes). Only a query with the
// reference's filters gets the on-demand price alone. Metal sizes are
// listed as AWS lists them, product family "Compute Instance (bare
// metal)" with tenancy Dedicated.

// variants are the other terms each type is listed under, and their
// price as a multiple of the on-demand price.
var variants = []struct {
	attrs map[string]string
	price float64
}{
	{map[string]string{"tenancy": "Dedicated"}, 1.1},
	{map[string]string{"operatingSystem": "Windows", "licenseModel": "License Included"}, 1.8},
	{map[string]string{"preInstalledSw": "SQL Std", "licenseModel": "License Included"}, 5},
	{map[string]string{"capacitystatus": "UnusedCapacityReservation"}, 1},
	{map[string]string{"marketoption": "CapacityBlock"}, 0.3},
}

// onDemandTerm is the offer term code of EC2's on-demand prices, and
// hourlyRate the rate code suffix of their hourly dimension.
const (
	onDemandTerm = "JRTCKXETXF"
	hourlyRate   = "6YS6EN2CT7"
)

type priceFilter struct {
	Type, Field, Value string
}

// matches applies a filter to product attributes; field names are not
// case sensitive, as the Price List API's are not.
func (f priceFilter) matches(attrs map[string]string) bool {
	var have string
	found := false
	for k, v := range attrs {
		if strings.EqualFold(k, f.Field) {
			have, found = v, true
		}
	}
	if !found {
		return false
	}
	switch f.Type {
	case "CONTAINS":
		return strings.Contains(have, f.Value)
	case "ANY_OF":
		return slices.Contains(strings.Split(f.Value, ","), have)
	case "NONE_OF":
		return !slices.Contains(strings.Split(f.Value, ","), have)
	}
	return have == f.Value // TERM_MATCH and EQUALS
}

func pricingError(typ, format string, args ...any) error {
	return &jsonError{Type: typ, Message: fmt.Sprintf(format, args...), Status: http.StatusBadRequest}
}

func (s *Server) getProducts(_ *http.Request, body []byte) (any, error) {
	var in struct {
		ServiceCode, FormatVersion, NextToken string
		Filters                               []priceFilter
		MaxResults                            *int
	}
	if err := decodeJSON(body, &in); err != nil {
		return nil, err
	}
	if in.ServiceCode != "AmazonEC2" {
		return nil, pricingError("NotFoundException", "Service code %s is not served by this endpoint: AmazonEC2 only", in.ServiceCode)
	}
	for _, f := range in.Filters {
		if !slices.Contains([]string{"", "TERM_MATCH", "EQUALS", "CONTAINS", "ANY_OF", "NONE_OF"}, f.Type) {
			return nil, pricingError("InvalidParameterException", "Filter type %s is not valid", f.Type)
		}
	}
	limit := intOr(in.MaxResults, 100)
	if limit < 1 || limit > 100 {
		return nil, pricingError("InvalidParameterException", "MaxResults must be between 1 and 100")
	}
	var list []string
	for _, t := range s.types {
		onDemand, _ := t.OnDemandPrice(s.profile.Spec.Region)
		base := s.productAttributes(t)
		products := []struct {
			attrs map[string]string
			price float64
		}{{base, onDemand}}
		for _, v := range variants {
			attrs := maps.Clone(base)
			maps.Copy(attrs, v.attrs)
			if base["tenancy"] == "Dedicated" && v.attrs["tenancy"] != "" {
				// Metal is listed dedicated already: its other tenancy
				// is a dedicated host's.
				attrs["tenancy"] = "Host"
			}
			products = append(products, struct {
				attrs map[string]string
				price float64
			}{attrs, onDemand * v.price})
		}
		for i, p := range products {
			if slices.ContainsFunc(in.Filters, func(f priceFilter) bool { return !f.matches(p.attrs) }) {
				continue
			}
			item, err := s.priceListItem(t, p.attrs, p.price, i)
			if err != nil {
				return nil, err
			}
			list = append(list, item)
		}
	}
	start := 0
	if in.NextToken != "" {
		raw, err := base64.RawURLEncoding.DecodeString(in.NextToken)
		n, convErr := strconv.Atoi(strings.TrimPrefix(string(raw), "offset:"))
		if err != nil || convErr != nil || n < 0 || n > len(list) {
			return nil, pricingError("InvalidNextTokenException", "The next token %q is not valid", in.NextToken)
		}
		start = n
	}
	out := map[string]any{"FormatVersion": "aws_v1", "PriceList": list[start:min(start+limit, len(list))]}
	if start+limit < len(list) {
		out["NextToken"] = base64.RawURLEncoding.EncodeToString([]byte("offset:" + strconv.Itoa(start+limit)))
	}
	return out, nil
}

// productAttributes are a type's product attributes as the price list
// has them.
func (s *Server) productAttributes(t catalog.InstanceType) map[string]string {
	family, tenancy := "Compute Instance", "Shared"
	if t.Size == "metal" {
		family, tenancy = "Compute Instance (bare metal)", "Dedicated"
	}
	attrs := map[string]string{
		"servicecode": "AmazonEC2", "regionCode": s.profile.Spec.Region, "location": s.profile.Spec.Region,
		"instanceType": t.Name, "instanceFamily": instanceFamily(t), "vcpu": strconv.Itoa(t.VCPU),
		"memory": strconv.FormatFloat(float64(t.MemoryMiB)/1024, 'f', -1, 64) + " GiB", "productFamily": family,
		"tenancy": tenancy, "operatingSystem": "Linux", "preInstalledSw": "NA", "capacitystatus": "Used",
		"marketoption": "OnDemand", "licenseModel": "No License required", "operation": "RunInstances",
		"usagetype": strings.ToUpper(catalog.RegionCode(s.profile.Spec.Region)) + "-BoxUsage:" + t.Name,
	}
	if t.GPUCount > 0 {
		attrs["gpu"] = strconv.Itoa(t.GPUCount)
	}
	return attrs
}

func instanceFamily(t catalog.InstanceType) string {
	switch t.Category {
	case "c":
		return "Compute optimized"
	case "r":
		return "Memory optimized"
	case "g", "p":
		return "GPU instance"
	}
	return "General purpose"
}

// priceListItem is one price list entry, the JSON string GetProducts
// returns for a product and its on-demand term.
func (s *Server) priceListItem(t catalog.InstanceType, attrs map[string]string, price float64, variant int) (string, error) {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s.profile.Spec.Region + "/" + t.Name + "/" + strconv.Itoa(variant)))
	sku := strings.ToUpper(fmt.Sprintf("%016x", h.Sum64()))
	term := sku + "." + onDemandTerm
	item := map[string]any{
		"product":     map[string]any{"productFamily": attrs["productFamily"], "attributes": attrs, "sku": sku},
		"serviceCode": "AmazonEC2",
		"terms": map[string]any{"OnDemand": map[string]any{term: map[string]any{
			"offerTermCode": onDemandTerm, "sku": sku, "effectiveDate": "2025-01-01T00:00:00Z", "termAttributes": map[string]any{},
			"priceDimensions": map[string]any{term + "." + hourlyRate: map[string]any{
				"rateCode": term + "." + hourlyRate, "unit": "Hrs", "beginRange": "0", "endRange": "Inf", "appliesTo": []string{},
				"description":  fmt.Sprintf("$%.4f per On Demand Linux %s Instance Hour", price, t.Name),
				"pricePerUnit": map[string]string{"USD": strconv.FormatFloat(price, 'f', 10, 64)},
			}},
		}}},
		"version": "20250101000000", "publicationDate": "2025-01-01T00:00:00Z",
	}
	raw, err := json.Marshal(item)
	if err != nil {
		return "", fmt.Errorf("encoding the price of %s, %w", t.Name, err)
	}
	return string(raw), nil
}
