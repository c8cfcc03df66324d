// Package manifests reads the Kubernetes YAML that `capstan simulate -f`
// takes (files, directories, stdin) into typed objects, validated offline
// as a real API server would validate them on create, so a NodePool that
// simulates also applies, and a mistake fails with the message kubectl
// would print.
//
// Capstan's own kinds (NodePool, SimNodeClass) go through the apiserver's
// CRD machinery from k8s.io/apiextensions-apiserver with the embedded
// CRDs: unknown fields are errors (fieldValidation=Strict), then schema
// defaults, OpenAPI validation and the CEL rules, then pkg/admission's
// NodePool checks, whose problems are Warnings: the controller keeps
// such a NodePool too. Built-in kinds are decoded strictly and checked as
// the API server checks them, by pkg/admission (pod specs, pod
// templates, PodDisruptionBudgets); a value its type cannot hold (a
// duration that overflows) is an error at its field path; the
// simulator's CloudProfile is decoded and validated by
// pkg/cloudprovider/sim and an llmaz OpenModel by pkg/flavors. Other
// kinds are skipped and listed, not errors. The timing annotations
// (ApplyAtAnnotation, DeleteAtAnnotation) put objects on the Set's
// timeline instead of the start (timed.go). The same object twice is an
// error unless they make it versions over time, a stream over
// MaxStreamBytes or a path that is no regular file (a named pipe, a
// device) is refused (pkg/readlimit), and errors escape the control
// characters they echo from the input. It never talks to a cluster.
package manifests
