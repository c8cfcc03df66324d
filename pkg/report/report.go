package report

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/simulator"
)

// The template is a file of its own so the markup reads as HTML; html/
// template escapes every name, reason and message the manifests and the
// cloud profile put into it.
//
//go:embed report.html.tmpl
var files embed.FS

// page is what the template renders.
type page struct {
	Title   string
	Summary simulator.Summary
	Samples int
	Charts  []chart
	Nodes   []simulator.Node
	Pending []simulator.Pod
	Events  []simulator.Event
	Scores  []simulator.ConsolidationScore
	// Warnings are the result's, shown first.
	Warnings []simulator.Warning
	// Requests are the ProvisioningRequests (docs/batch.md).
	Requests []simulator.ProvisioningRequest
	// Buffers are what each CapacityBuffer holds and costs (docs/batch.md).
	Buffers []simulator.BufferCost
}

// WriteHTML writes one self-contained HTML file (no network at view
// time: no external CSS/JS/fonts/images) with r's summary, step charts
// of nodes by capacity type, cost per hour and pending pods over virtual
// time, and tables of the nodes, pending pods, events and, when Balanced
// NodePools scored moves, their scores, the ProvisioningRequests, if any,
// with when each was provisioned or refused, and, when CapacityBuffers
// were kept, what each holds and costs; the result's warnings, if any,
// come first.
func WriteHTML(w io.Writer, r *simulator.Result, title string) error {
	// pct shows a fraction as a percentage (the scores' fractions).
	pct := func(f float64) float64 { return f * 100 }
	t, err := template.New("report.html.tmpl").Funcs(template.FuncMap{"pct": pct}).ParseFS(files, "report.html.tmpl")
	if err != nil {
		return fmt.Errorf("parsing the report template, %w", err)
	}
	p := page{Title: title, Summary: r.Summary, Samples: len(r.Samples), Charts: charts(r.Samples), Nodes: r.Nodes, Events: r.Events, Scores: r.ConsolidationScores,
		Warnings: r.Warnings, Requests: r.ProvisioningRequests, Buffers: r.CapacityBuffers}
	for _, pod := range r.Pods {
		if pod.Node == "" {
			p.Pending = append(p.Pending, pod)
		}
	}
	// Rendered whole before writing, so a failure leaves no half page.
	var b bytes.Buffer
	if err := t.Execute(&b, p); err != nil {
		return fmt.Errorf("rendering report, %w", err)
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("writing report, %w", err)
	}
	return nil
}

// charts are the report's three charts. Capacity types get a dash
// pattern each as well as a color, so lines that coincide (often all at
// zero) stay tellable apart, also in grayscale.
func charts(samples []simulator.Sample) []chart {
	nodes := func(capacityType string) func(simulator.Sample) float64 {
		return func(s simulator.Sample) float64 { return float64(s.Nodes[capacityType]) }
	}
	return []chart{
		newChart("nodes", "Nodes by capacity type", samples, true,
			seriesSpec{v1.CapacityTypeSpot, "spot", "#d95f02", "", nodes(v1.CapacityTypeSpot)},
			seriesSpec{v1.CapacityTypeOnDemand, "on-demand", "#1f63b5", "9 4", nodes(v1.CapacityTypeOnDemand)},
			seriesSpec{v1.CapacityTypeReserved, "reserved", "#1b8a5a", "2 4", nodes(v1.CapacityTypeReserved)}),
		newChart("cost", "Cost per hour", samples, false,
			seriesSpec{"cost", "cost per hour", "#7b3294", "", func(s simulator.Sample) float64 { return s.CostPerHour }}),
		newChart("pending", "Pending pods", samples, true,
			seriesSpec{"pending", "pending pods", "#c0392b", "", func(s simulator.Sample) float64 { return float64(s.PodsPending) }}),
	}
}
