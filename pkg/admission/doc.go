// Package admission holds the checks an object must pass to be taken as
// written, in one place for `capstan controller` and `capstan simulate`:
//
//   - NodePool: what the CRD cannot say (budget time zones and schedules,
//     the return-to-preferred and rebalance annotations). The controller
//     builds the NodePool's ValidationSucceeded condition from it
//     (ValidationSucceeded); simulate reports the same problems as
//     warnings. Such a NodePool is not refused: the steps that read a bad
//     setting treat it as the controller does (its budgets allow
//     nothing, its nodes do not return, rebalance recommendations stay
//     events).
//   - PodDisruptionBudget, pod specs and the workloads that carry a pod
//     template: what the API server refuses on create, which simulate
//     (having no API server) refuses too. Where apimachinery provides the
//     server's rule it is called; a rule restated from k8s.io/kubernetes,
//     which cannot be imported as a module, cites its upstream function.
//
// Every check returns a field.ErrorList with the field paths within the
// object; callers add where the object was read.
package admission
