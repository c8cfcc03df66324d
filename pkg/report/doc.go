// Package report renders a `capstan simulate` result as one
// self-contained HTML file: the summary, step charts over virtual time
// drawn as inline SVG, and tables of nodes, pending pods and events. It
// needs nothing from the network to view, so the file can be attached to
// an issue or archived by CI and still open years later.
package report
