// Package security is the end-to-end suite of the controller's served
// endpoints in production mode (--metrics-secure): metrics and explain
// over HTTPS, each request authenticated and authorized by the API server,
// with the controller itself running under its generated roles only.
package security
