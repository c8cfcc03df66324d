package v1

import (
	"fmt"
	"regexp"
	"strconv"
)

// SpotMaxPriceAnnotationKey caps what an hour of a spot instance launched
// from the EC2NodeClass may cost, in dollars as a decimal ("0.042"): the
// simulated cloud's SimNodeClass spec.spotMaxPrice, as an annotation so
// the EC2NodeClass schema (and the reference's drift hash over it) stays
// exactly the reference's. Unset, the on-demand price is the cap
// (docs/aws.md, "Spot max price").
const SpotMaxPriceAnnotationKey = "capstan.dev/spot-max-price"

// MinSpotMaxPrice is the lowest max price EC2 takes: CreateFleet refuses
// an override MaxPrice below USD 0.001 with InvalidParameterValue (the
// EC2 API model, FleetLaunchTemplateOverridesRequest.MaxPrice).
const MinSpotMaxPrice = 0.001

// maxPriceLength bounds the annotation's value; no hourly price needs
// more digits.
const maxPriceLength = 20

var decimalPrice = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)

// SpotMaxPrice is the class's SpotMaxPriceAnnotationKey: its text as
// written (what CreateFleet is sent), its value, and whether it is set.
// A value that is not a decimal number of dollars of at least
// MinSpotMaxPrice is an error.
func (in *EC2NodeClass) SpotMaxPrice() (string, float64, bool, error) {
	text, ok := in.Annotations[SpotMaxPriceAnnotationKey]
	if !ok {
		return "", 0, false, nil
	}
	if len(text) > maxPriceLength || !decimalPrice.MatchString(text) {
		return text, 0, true, fmt.Errorf("annotation %s %q is not a decimal number of dollars such as 0.042", SpotMaxPriceAnnotationKey, text)
	}
	p, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return text, 0, true, fmt.Errorf("annotation %s %q, %w", SpotMaxPriceAnnotationKey, text, err)
	}
	if p < MinSpotMaxPrice {
		return text, 0, true, fmt.Errorf("annotation %s %q is below EC2's minimum max price of %g dollars", SpotMaxPriceAnnotationKey, text, MinSpotMaxPrice)
	}
	return text, p, true, nil
}
