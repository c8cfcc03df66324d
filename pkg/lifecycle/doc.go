// Package lifecycle is a NodeClaim's life as pure steps: what comes next
// from launch to registration and initialization (or the launch and
// liveness timeouts), what follows a failed launch or a launch timeout
// (OnLaunchError, OnLaunchTimeout: everything to apply, the backoff
// included), how a registering Node is synced, and garbage collection's
// comparison of the cloud's instances with the NodeClaims. The nodeclaim
// and garbagecollection controllers apply them to the API server;
// `capstan simulate` to its in-memory world.
package lifecycle
