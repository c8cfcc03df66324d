// Package apiauth guards the controller's HTTPS endpoints (metrics and
// explain) with the API server's own authentication and authorization:
// a bearer token is checked with a TokenReview and each request with a
// SubjectAccessReview. /metrics needs `get` on its non-resource path, as
// controller-runtime's filter asks; an explain request needs what reading
// its object through the API would: `get` on that pod (in its namespace),
// NodePool or node, so explain never shows more than RBAC allows.
package apiauth
