// Package budgets evaluates a NodePool's disruption budgets at a moment:
// which are in force, and when each next opens or closes, in the
// budget's time zone (the capstan.dev/budget-timezone annotation, UTC by
// default). It is pure: explain uses it now, disruption will.
package budgets
