// Package clusterstate is the imperative side of pkg/state: it lists the
// API objects a snapshot is built from (through a cache-backed client) and
// asks the cloud for instance types, then calls state's pure builders; it
// reads the OpenModels model-serving pods name the same way, for the steps
// that resolve flavors. Pure packages import pkg/state, never this one (a
// depguard rule keeps API clients out of them).
package clusterstate
