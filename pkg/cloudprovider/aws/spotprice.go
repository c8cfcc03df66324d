package aws

import (
	awssdk "github.com/aws/aws-sdk-go-v2/aws"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	v1 "github.com/capstan-dev/capstan/api/v1"
)

// spotCap is the most an hour of the class's spot instances of a type
// whose on-demand price is onDemand may cost, and whether there is a cap:
// the class's max price annotation, else the on-demand price, which is
// EC2's own default max price (decision 4, docs/aws.md "Spot max
// price"); no cap when neither is known. A class whose annotation cannot
// be read gets a cap no spot price is under: its status says why
// (ValidationSucceeded), and it must not launch spot above what its user
// meant to pay.
func spotCap(class *awsv1.EC2NodeClass, onDemand float64) (float64, bool) {
	_, limit, set, err := class.SpotMaxPrice()
	switch {
	case err != nil:
		return 0, true
	case set:
		return limit, true
	case onDemand > 0:
		return onDemand, true
	}
	return 0, false
}

// fleetMaxPrice is the MaxPrice of a fleet's overrides: the class's max
// price annotation as written, for a spot fleet; nil otherwise, which
// EC2 takes as the on-demand price. The override's MaxPrice is per
// instance-hour, the cap the annotation states; SpotOptions.MaxTotalPrice
// would cap the whole fleet's hourly total instead (the EC2 API model).
func fleetMaxPrice(class *awsv1.EC2NodeClass, capacityType string) *string {
	text, _, set, err := class.SpotMaxPrice()
	if capacityType != v1.CapacityTypeSpot || !set || err != nil {
		return nil
	}
	return awssdk.String(text)
}
