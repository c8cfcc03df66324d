// Package gangrelease applies lifecycle.ReleaseGroups to the API server:
// when a NodeClaim of a gang's launch fails or the launch does not finish
// in time, the launch's NodeClaims that run no pod are deleted, so no
// part of a gang holds capacity alone (docs/batch.md, "Gangs").
package gangrelease
