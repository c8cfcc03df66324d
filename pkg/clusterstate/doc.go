// Package clusterstate is the imperative side of pkg/state: it lists the
// API objects a snapshot is built from (through a cache-backed client) and
// asks the cloud for instance types, then calls state's pure builders. Pure
// packages import pkg/state, never this one (a depguard rule keeps API
// clients out of them).
package clusterstate
