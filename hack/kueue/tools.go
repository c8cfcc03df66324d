//go:build tools

// Package tools pins the Kueue manager the e2e suite runs (test/e2e/batch).
// Kueue pins its own Kubernetes libraries, so it is built from this module,
// never from Capstan's; `make tools` builds it into bin/.
package tools

import (
	_ "sigs.k8s.io/kueue/cmd/kueue"
)
