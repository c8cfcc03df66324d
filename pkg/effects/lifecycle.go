package effects

import "time"

// SetLaunchAttempts keeps a NodeClaim's failed launches so far, which the
// lifecycle step reads back to wait out its backoff; zero Failures
// forgets them. They are not stored in the NodeClaim (the API has no
// field for them), so a restarted controller starts from none.
type SetLaunchAttempts struct {
	NodeClaim string
	Failures  int
	Last      time.Time
}

func (SetLaunchAttempts) isEffect() {}

// DeleteNode deletes a Node: garbage collection's, for the Node of an
// instance no NodeClaim owns, which nothing else would take away.
type DeleteNode struct{ Name string }

func (DeleteNode) isEffect() {}
