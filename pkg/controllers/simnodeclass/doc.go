// Package simnodeclass is the SimNodeClass controller. It resolves each
// SimNodeClass against the simulated cloud's capacity reservations with the
// pure sim.ResolveNodeClass and writes the result to its status: the
// selected, active reservations with their free slots as the account last
// saw them, and the Ready condition.
//
// Reservations start, end and fill up without any Kubernetes event, so the
// controller looks again at the next start or end of a selected
// reservation and at least every refresh period (default one minute).
// Every decision is the pure Step (status.go); the Controller
// (controller.go) reads the SimNodeClass and the reservations, calls Step
// and patches the status.
package simnodeclass
