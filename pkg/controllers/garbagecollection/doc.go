// Package garbagecollection keeps the cloud and the cluster in step: a
// cloud instance no NodeClaim owns (a controller crashed between launching
// it and recording it) is terminated once it is older than a grace
// period, and a launched NodeClaim whose instance is gone is deleted. The
// pure Collect decides; the controller lists, calls it and acts, on a
// period.
package garbagecollection
