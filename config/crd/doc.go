// Package crd embeds Capstan's generated CustomResourceDefinitions so tests,
// the controller and the local cluster install exactly what is checked in.
package crd
