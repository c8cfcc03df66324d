// Package printable makes text from untrusted input safe to print to a
// terminal: what `simulate` echoes from manifests and what `explain`
// prints from a controller's answers or from cluster objects (Events and
// conditions anyone with create rights writes). A terminal obeys control
// sequences (ESC, CR, OSC, C1 controls, bidirectional overrides), so every
// rune that does not print is written as a Go escape instead. It is a
// leaf: the standard library only.
package printable
