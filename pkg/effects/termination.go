package effects

// DeleteNode deletes a Node. With the termination finalizer on it, the
// Node stays (deleting) until its NodeClaim's instance is gone.
type DeleteNode struct{ Name string }

// Observe records Value in the histogram Name.
type Observe struct {
	Name  string
	Value float64
}

func (DeleteNode) isEffect() {}
func (Observe) isEffect()    {}
