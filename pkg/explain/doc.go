// Package explain answers "why" for `capstan explain`: why a pod is
// pending and what each NodePool would do for it, what a NodePool has and
// costs, which budgets hold and how many disruptions they allow now, what
// a node is, why it is that instance and why it is or is not being
// disrupted (the disruption package's own candidates, budgets and
// methods). It is pure: the running controller serves its answers over
// HTTP from its live view, and without a controller the CLI computes what
// the API alone allows and says what it cannot know. The text escapes
// whatever does not print (pkg/printable): the answers quote cluster
// objects anyone may write.
package explain
