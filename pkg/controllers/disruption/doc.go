// Package disruption is the disruption controller: it runs pkg/disruption's
// Engine (plan a command with the methods in order, validate it again
// after a delay, taint its candidates, pre-spin replacements, delete the
// candidates or roll back) against the API server, reports verdicts as
// events and metrics, and keeps each NodeClaim's Drifted and
// Consolidatable conditions (conditions.go). The forceful methods run
// beside it: expiration, interruption notices (interruption.go) and the
// end of capacity blocks (capacityblock.go). Termination drains what it
// deletes.
package disruption
