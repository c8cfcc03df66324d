// Package report renders a `capstan simulate` result as one
// self-contained HTML file: the summary, step charts over virtual time
// drawn as inline SVG, and tables of nodes, pending pods and events. It
// needs nothing from the network to view, so the file can be attached to
// an issue or archived by CI and still open years later.
//
// The charts are plain data for tools and tests as well as pictures.
// Each is an <svg class="chart" data-chart="nodes|cost|pending"> whose
// data-y-max is the exact maximum of the values it plots (0 when all
// are), drawn at the top of its <rect class="plot-area">; time runs from
// 0 at the area's left to the last sample at its right. Each series is a
// <polyline class="series" data-series="spot|on-demand|reserved|cost|
// pending" data-max="..."> with two points per sample: point 2i at
// sample i's time and the previous sample's value (for sample 0, its
// own), point 2i+1 at sample i's time and value, so a value holds until
// the next sample.
package report
