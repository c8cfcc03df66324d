package effects

// Observe records Value in the histogram Name.
type Observe struct {
	Name  string
	Value float64
}

func (Observe) isEffect() {}
