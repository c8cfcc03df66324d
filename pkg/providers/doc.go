// Package providers is the seam between `capstan controller` and the
// clouds it runs on: a Provider is everything the core knows of one cloud
// (its name, flags, API kinds, controllers and start). Each cloud exports
// one Provider value from its own package under pkg/providers, and cmd
// lists them explicitly; see docs/providers.md for adding one.
package providers
