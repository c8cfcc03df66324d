// Package conformance is the contract every CloudProvider must meet, as
// one suite of tests each provider's own tests run (Run) against a fresh
// cloud of its kind: the simulated cloud, and AWS through the local EC2
// endpoint. It checks what the core relies on and the interface's comments
// promise: instance types and offerings are well formed; Create launches
// the capacity type and price the solver predicted (provisioning's launch
// plan: reserved, then spot no dearer than the cheapest on-demand option,
// then on-demand at the lowest price); Create is idempotent by NodeClaim
// name; Get, List and Delete agree and Delete is idempotent; the typed
// errors (insufficient capacity naming the offerings tried, a NodeClass
// that is missing or of a kind the provider does not serve); and the
// interruption source. It lives under pkg/test, imported only by tests:
// it asks the solver for its predictions, and the providers it checks sit
// below the solver (AGENTS.md, "Layout and import direction").
package conformance
