// Package app builds capstan's cobra command tree; main only executes it,
// so the commands are testable in-process.
package app
