// Package cpmetrics decorates a CloudProvider with Prometheus metrics: the
// duration of every call that reaches the cloud and its errors by type.
// The package name is unique in the repository (a bare "metrics" would
// clash); import it as cpmetrics.
//
// The decorator keeps its metric vectors on itself, registered on the
// Registerer it is given: no package globals, so tests use a fresh
// registry each.
package cpmetrics
