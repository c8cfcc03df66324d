// Command crdpatch adds to the generated karpenter.sh CRDs the schema
// constraints controller-gen cannot express, because the fields belong to
// types from k8s.io/api (corev1.Taint) or to map values: the taint effect
// enum and key/value syntax, and the label-value syntax of template labels,
// as the reference's v1 CRDs have them, and the label-value syntax on a
// NodeOverlay requirement's values array, where the reference puts it.
// `make generate` runs it after controller-gen, so `make verify` keeps it applied. The other groups'
// CRDs (sim.capstan.dev, karpenter.k8s.aws) need no patch: where they
// constrain map values, a named Go type carries the constraint.
package main
