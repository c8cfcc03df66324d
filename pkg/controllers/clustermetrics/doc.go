// Package clustermetrics exports what the cluster looks like to Capstan as
// Prometheus gauges, computed from the informer cache at scrape time:
// NodeClaims by phase, nodes by capacity type, and what each NodePool's
// nodes cost per hour.
package clustermetrics
