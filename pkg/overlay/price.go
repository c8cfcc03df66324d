package overlay

import (
	"fmt"
	"strconv"
	"strings"
)

// change is a parsed price or priceAdjustment.
type change struct {
	// set replaces the price; otherwise delta is added, or percent of it.
	set     bool
	percent bool
	value   float64
}

// parseChange reads a price ("5.00") or priceAdjustment ("+5.00",
// "-10%"): a price has no sign, an adjustment always one.
func parseChange(s string, adjustment bool) (change, error) {
	signed := strings.HasPrefix(s, "+") || strings.HasPrefix(s, "-")
	if signed != adjustment {
		return change{}, fmt.Errorf("price %q: a price has no sign, a priceAdjustment always has one", s)
	}
	c := change{set: !adjustment}
	if adjustment && strings.HasSuffix(s, "%") {
		c.percent = true
		s = strings.TrimSuffix(s, "%")
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return change{}, fmt.Errorf("parsing price %q, %w", s, err)
	}
	c.value = v
	return c, nil
}

// apply is the price after the change, never below zero (the reference's
// cloudprovider.AdjustedPrice).
func (c change) apply(price float64) float64 {
	switch {
	case c.set:
		price = c.value
	case c.percent:
		price *= 1 + c.value/100
	default:
		price += c.value
	}
	return max(price, 0)
}
