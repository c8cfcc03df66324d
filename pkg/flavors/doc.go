// Package flavors turns an llmaz model-serving pod and its OpenModel into
// the preference-ordered required node-selector terms Capstan's solver
// tries, one flavor at a time.
//
// It exists because llmaz (seed 001) expresses GPU fungibility outside the
// pod: the OpenModel lists inference flavors (each a nodeSelector), and the
// pod names its model by label and, optionally, a preferred subset of
// flavors by annotation. The reference Karpenter ignores both, so Capstan
// resolves them here into plain terms rather than mutating the pod.
//
// The package is pure: it imports only Kubernetes API packages and the
// standard library, never a client, and never llmaz's Go module; it decodes
// the OpenModel from an unstructured object into its own minimal types.
//
// The terms Resolve returns are for Capstan's solver only and are never
// written to a pod. The solver reads a term as a set of requirements, so a
// term with no expressions matches every node; kube-scheduler reads the
// same term as matching nothing. The pod's spec.nodeSelector is not folded
// into the terms because the solver ANDs it into every term itself.
//
// A flavor's resources size its terms: WithResources is the pod as llmaz
// renders it for that flavor (the model-runner container's requests and
// limits replaced), from which the provisioner takes the term's requests
// (docs/gpu-flavors.md, "Flavor resources"). An OpenModel whose resources
// are not valid is an *InvalidModelError, reported on its pods.
package flavors
