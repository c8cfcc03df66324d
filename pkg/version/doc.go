// Package version reports the build's version, set at link time.
package version
