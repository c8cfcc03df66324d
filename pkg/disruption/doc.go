// Package disruption is the pure core of voluntary disruption (seed 004):
// the candidates a snapshot offers and what blocks each, the budgets'
// arithmetic per NodePool and reason, and the methods, an ordered list of
// small implementations of one interface of which the first to yield a
// command wins. It takes plain values and now and returns decisions; the
// disruption controller and `capstan simulate` are to apply them (not
// wired yet: see docs and issue 18).
package disruption
