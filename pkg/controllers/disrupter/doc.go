// Package disrupter holds the disruption controllers, the shells around
// pkg/disruption and pkg/interruption: the disruption controller runs
// the Engine (plan a command with the methods in order, validate it
// again after a delay, taint its candidates, pre-spin replacements,
// delete the candidates or roll back) and keeps each NodeClaim's Drifted
// and Consolidatable conditions (conditions.go); the forceful methods run
// beside it: expiration, interruption notices (interruption.go) and the
// end of capacity blocks (capacityblock.go). Each gathers its inputs,
// calls the pure step and hands the effects it returns to the applier
// (pkg/controllers/apply), so `capstan simulate` applies the same
// effects to its world. Termination drains what they delete.
package disrupter
