// Package layers holds the tests that read the module's import graph
// (`go list`): no package imports one in a layer above its own, in the
// order AGENTS.md ("Layout and import direction") declares, and no pure
// package links a Kubernetes client, however indirectly. The depguard
// rule in .golangci.yml checks the pure packages' direct imports; these
// tests check what they link.
package layers
