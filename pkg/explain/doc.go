// Package explain answers "why" for `capstan explain`: why a pod is
// pending and what each NodePool would do for it, what a NodePool has and
// costs and which budgets hold, what a node is and why it is that
// instance. It is pure: the running controller serves its answers over
// HTTP from its live view, and without a controller the CLI computes what
// the API alone allows and says what it cannot know.
package explain
