// Package disruption is the pure core of voluntary disruption (seed 004):
// the candidates a snapshot offers and what blocks each, the budgets'
// arithmetic per NodePool and reason, the methods (an ordered list of
// small implementations of one interface, of which the first to yield a
// command wins; Repair, replacing unhealthy nodes within a repair budget,
// goes first when the NodeRepair gate is on), the orchestration of a command (validate, taint,
// pre-spin, delete or roll back) and the Engine that drives it. It takes
// plain values and now and returns decisions and actions; the disruption
// controller applies them through the API server and `capstan simulate`
// to its world. The forceful methods' decisions live here too: when a
// NodeClaim expires (ExpiresAt), how it is marked (MarkForceful), and
// which capacity blocks' nodes to drain before the cloud reclaims them
// (CapacityBlockDrains). Virtual pods that fit now move with their node
// as its pods do (placeVirtual), so no command takes the capacity they
// hold. Under consolidationPolicy Balanced, consolidation
// scores each move by its savings against its disruption and takes it
// only above the NodePool's threshold (balanced.go).
package disruption
