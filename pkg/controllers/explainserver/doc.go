// Package explainserver serves the running controller's live view of
// "why" read-only over HTTP, on the metrics address: /explain/pod/NS/NAME,
// /explain/nodepool/NAME and /explain/node/NAME return pkg/explain's
// answers as JSON, computed with the instance types, offerings and
// unavailable-offerings cache only the controller holds.
package explainserver
