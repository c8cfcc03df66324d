// Package apply carries out the effects Capstan's pure steps return
// (pkg/effects) against the API server, the cloud, the event recorder and
// the metrics: merge patches and status patches, the Eviction API, the
// cloud's Create and Delete. It decides nothing: a launch's outcome goes
// to lifecycle.AfterLaunch and the effects that returns are applied in
// turn. pkg/simulator applies the same effects to its in-memory world; a
// test there runs one table of effects through both (docs/architecture.md).
package apply
