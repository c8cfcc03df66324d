package sim

import (
	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
)

// faultLocked is the first of the profile's launch faults in force that
// refuses the candidate, and its index; nil when none does.
func (c *Cloud) faultLocked(l launch, cand candidate) (int, *simv1alpha1.LaunchFault) {
	for i := range c.opts.Profile.Spec.LaunchFaults {
		f := &c.opts.Profile.Spec.LaunchFaults[i]
		if c.faultInForceLocked(i, f, l) && faultMatches(f, l, cand) {
			return i, f
		}
	}
	return 0, nil
}

// faultInForceLocked: the fault's window holds l's time and its count is
// not used up.
func (c *Cloud) faultInForceLocked(i int, f *simv1alpha1.LaunchFault, l launch) bool {
	if f.From != nil && l.now.Before(c.state.Start.Add(f.From.Duration)) {
		return false
	}
	if f.Until != nil && !l.now.Before(c.state.Start.Add(f.Until.Duration)) {
		return false
	}
	return f.Count == nil || c.state.FaultsFired[i] < *f.Count
}

func faultMatches(f *simv1alpha1.LaunchFault, l launch, cand candidate) bool {
	return (f.CapacityType == "" || f.CapacityType == cand.o.CapacityType) &&
		(f.Zone == "" || f.Zone == cand.o.Zone) &&
		(f.InstanceType == "" || f.InstanceType == cand.it.Name) &&
		(f.NodeClass == "" || f.NodeClass == l.nodeClass.Name)
}

// faultsFiredLocked counts one launch against each fault that refused
// part of it.
func (c *Cloud) faultsFiredLocked(fired map[int]bool) {
	if len(fired) == 0 {
		return
	}
	if c.state.FaultsFired == nil {
		c.state.FaultsFired = map[int]int{}
	}
	for i := range fired {
		c.state.FaultsFired[i]++
	}
}
