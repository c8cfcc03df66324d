package report_test

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/capstan-dev/capstan/pkg/disruption"
	"github.com/capstan-dev/capstan/pkg/manifests"
	"github.com/capstan-dev/capstan/pkg/provreq"
	"github.com/capstan-dev/capstan/pkg/report"
	"github.com/capstan-dev/capstan/pkg/simulator"
	"github.com/capstan-dev/capstan/pkg/test"
)

// element is an HTML or SVG element as encoding/xml reads it in its
// lenient mode, where HTML's void elements close themselves.
type element struct {
	XMLName  xml.Name
	Attrs    []xml.Attr `xml:",any,attr"`
	Children []element  `xml:",any"`
	Text     string     `xml:",chardata"`
}

func (e element) attr(name string) string {
	for _, a := range e.Attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// find is e's descendants named name ("*" for any) with the class, if
// one is given, in document order.
func (e element) find(name, class string) []element {
	var out []element
	for _, c := range e.Children {
		if (name == "*" || c.XMLName.Local == name) && (class == "" || c.attr("class") == class) {
			out = append(out, c)
		}
		out = append(out, c.find(name, class)...)
	}
	return out
}

func render(t *testing.T, r *simulator.Result, title string) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := report.WriteHTML(&b, r, title); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func parse(t *testing.T, doc []byte) element {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(doc))
	d.Strict, d.AutoClose, d.Entity = false, xml.HTMLAutoClose, xml.HTMLEntity
	var root element
	if err := d.Decode(&root); err != nil {
		t.Fatalf("parsing the report: %v", err)
	}
	return root
}

// example runs the simulator on one of examples/ as `capstan simulate
// -f examples/NAME` does.
func example(t *testing.T, name string) *simulator.Result {
	t.Helper()
	root, err := test.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	set, err := manifests.Load([]string{filepath.Join(root, "examples", name)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := simulator.Simulate(t.Context(), set, "", simulator.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func sample(seconds float64, spot, onDemand, reserved int, cost float64, pending int) simulator.Sample {
	return simulator.Sample{
		At: (time.Duration(seconds) * time.Second).String(), Seconds: seconds,
		Nodes:       map[string]int{"spot": spot, "on-demand": onDemand, "reserved": reserved},
		CostPerHour: cost, PodsPending: pending,
	}
}

// shapes are hand-built runs whose charts are checked point by point.
func shapes() map[string][]simulator.Sample {
	return map[string][]simulator.Sample{
		"no samples":        nil,
		"one sample":        {sample(0, 2, 1, 0, 0.5, 3)},
		"one sample, later": {sample(90, 0, 0, 4, 1.25, 0)},
		"flat":              {sample(0, 1, 1, 1, 0.3, 2), sample(600, 1, 1, 1, 0.3, 2), sample(1200, 1, 1, 1, 0.3, 2)},
		"rising": {
			sample(0, 0, 0, 0, 0, 5), sample(30, 1, 0, 0, 0.0898, 3), sample(90, 2, 1, 0, 0.4363, 1),
			sample(3600, 3, 2, 1, 0.9, 0),
		},
		"falling": {
			sample(0, 3, 2, 1, 0.9, 7), sample(1, 2, 2, 1, 0.8, 7), sample(2, 2, 2, 0, 0.5, 4),
			sample(7200, 0, 0, 0, 0, 0),
		},
		"zero everywhere": {
			{At: "0s", Seconds: 0}, sample(60, 0, 0, 0, 0, 0), sample(120, 0, 0, 0, 0, 0),
		},
	}
}

func TestChartsPlotEverySample(t *testing.T) {
	runs := shapes()
	runs["examples/spot-shortage"] = example(t, "spot-shortage").Samples
	for name, samples := range runs {
		t.Run(name, func(t *testing.T) {
			doc := parse(t, render(t, &simulator.Result{Samples: samples}, name))
			checkCharts(t, doc, samples)
		})
	}
}

// checkCharts checks each chart against the samples: data-y-max is the
// data's maximum; each series has two points per sample, point 2i+1 at
// sample i's time and value and point 2i at its time and the previous
// sample's value (sample 0's own); x never goes back; the maximum is
// drawn at the top of the plot area, and an all-zero chart on its
// bottom.
func checkCharts(t *testing.T, doc element, samples []simulator.Sample) {
	t.Helper()
	// plots say what each chart plots: its series, and a series' value
	// in a sample.
	plots := []struct {
		chart  string
		series []string
		value  func(s simulator.Sample, series string) float64
	}{
		{"nodes", []string{"spot", "on-demand", "reserved"}, func(s simulator.Sample, series string) float64 { return float64(s.Nodes[series]) }},
		{"cost", []string{"cost"}, func(s simulator.Sample, _ string) float64 { return s.CostPerHour }},
		{"pending", []string{"pending"}, func(s simulator.Sample, _ string) float64 { return float64(s.PodsPending) }},
	}
	svgs := doc.find("svg", "chart")
	if len(svgs) != len(plots) {
		t.Fatalf("found %d charts, want %d", len(svgs), len(plots))
	}
	xMax := 0.0
	for _, s := range samples {
		xMax = math.Max(xMax, s.Seconds)
	}
	for i, p := range plots {
		svg := svgs[i]
		if got := svg.attr("data-chart"); got != p.chart {
			t.Errorf("chart %d is %q, want %q", i, got, p.chart)
			continue
		}
		if titles := svg.find("title", ""); len(titles) == 0 || titles[0].Text == "" || svg.attr("role") != "img" {
			t.Errorf("chart %s has no accessible title", p.chart)
		}
		box := svg.find("rect", "plot-area")
		if len(box) != 1 {
			t.Fatalf("chart %s has %d plot areas", p.chart, len(box))
		}
		left, top := number(t, box[0].attr("x")), number(t, box[0].attr("y"))
		right, bottom := left+number(t, box[0].attr("width")), top+number(t, box[0].attr("height"))

		wantMax := 0.0
		for _, s := range samples {
			for _, name := range p.series {
				wantMax = math.Max(wantMax, p.value(s, name))
			}
		}
		yMax := number(t, svg.attr("data-y-max"))
		if yMax != wantMax {
			t.Errorf("chart %s: data-y-max %v, want the data's maximum %v", p.chart, yMax, wantMax)
		}
		x := func(s simulator.Sample) float64 { return scale(s.Seconds, xMax, left, right) }
		y := func(v float64) float64 { return scale(v, yMax, bottom, top) }

		lines := svg.find("polyline", "series")
		var names []string
		for _, l := range lines {
			names = append(names, l.attr("data-series"))
		}
		if diff := cmp.Diff(p.series, names); diff != "" {
			t.Errorf("chart %s series (-want +got):\n%s", p.chart, diff)
			continue
		}
		for j, l := range lines {
			name := p.series[j]
			pts := points(t, l.attr("points"))
			if len(pts) != 2*len(samples) {
				t.Errorf("%s/%s: %d points, want 2 per sample, %d", p.chart, name, len(pts), 2*len(samples))
				continue
			}
			seriesMax := 0.0
			for k, s := range samples {
				v := p.value(s, name)
				seriesMax = math.Max(seriesMax, v)
				prev := v
				if k > 0 {
					prev = p.value(samples[k-1], name)
				}
				rise, hold := pts[2*k], pts[2*k+1]
				if !near(hold, [2]float64{x(s), y(v)}) || !near(rise, [2]float64{x(s), y(prev)}) {
					t.Errorf("%s/%s sample %d (%s, %v after %v): points %v %v, want %v %v",
						p.chart, name, k, s.At, v, prev, rise, hold, [2]float64{x(s), y(prev)}, [2]float64{x(s), y(v)})
				}
				if v == wantMax && wantMax > 0 && hold[1] != top {
					t.Errorf("%s/%s sample %d holds the maximum %v at y %v, not the plot's top %v", p.chart, name, k, v, hold[1], top)
				}
				if wantMax == 0 && hold[1] != bottom {
					t.Errorf("%s/%s sample %d is at y %v, not on the axis %v, in an all-zero chart", p.chart, name, k, hold[1], bottom)
				}
			}
			for k := 1; k < len(pts); k++ {
				if pts[k][0] < pts[k-1][0] {
					t.Errorf("%s/%s: point %d goes back in time, x %v after %v", p.chart, name, k, pts[k][0], pts[k-1][0])
				}
			}
			if got := number(t, l.attr("data-max")); got != seriesMax {
				t.Errorf("%s/%s: data-max %v, want %v", p.chart, name, got, seriesMax)
			}
		}
	}
}

// scale maps v in [0, max] onto [from, to], all at from when max is 0:
// the report's mapping, restated.
func scale(v, maxV, from, to float64) float64 {
	if maxV == 0 {
		return from
	}
	return from + v/maxV*(to-from)
}

// near allows for coordinates printed to a hundredth.
func near(got, want [2]float64) bool {
	return math.Abs(got[0]-want[0]) <= 0.005 && math.Abs(got[1]-want[1]) <= 0.005
}

func number(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("not a number: %q", s)
	}
	return v
}

func points(t *testing.T, s string) [][2]float64 {
	t.Helper()
	var out [][2]float64
	for _, p := range strings.Fields(s) {
		x, y, ok := strings.Cut(p, ",")
		if !ok {
			t.Fatalf("point %q is not x,y", p)
		}
		out = append(out, [2]float64{number(t, x), number(t, y)})
	}
	return out
}

// TestSelfContained: the report must open with no network, so nothing
// in it may load anything: no loading elements, no src or href, no url()
// or @import in its CSS, and no web address but the SVG namespace.
func TestSelfContained(t *testing.T) {
	loader := regexp.MustCompile(`(?i)<(script|link|img|iframe|object|embed|audio|video|source)\b`)
	web := regexp.MustCompile(`(?i)https?://`)
	for name, r := range map[string]*simulator.Result{
		"examples/spot-shortage": example(t, "spot-shortage"),
		"hostile names":          hostile(),
	} {
		t.Run(name, func(t *testing.T) {
			doc := render(t, r, name)
			if m := loader.Find(doc); m != nil {
				t.Errorf("the report loads something: %q", m)
			}
			for _, at := range web.FindAllIndex(doc, -1) {
				if !bytes.HasSuffix(doc[:at[0]], []byte(`xmlns="`)) {
					t.Errorf("the report refers to the web outside an xmlns: %q", doc[max(0, at[0]-40):min(len(doc), at[1]+40)])
				}
			}
			root := parse(t, doc)
			for _, e := range append(root.find("*", ""), root) {
				for _, a := range e.Attrs {
					if a.Name.Local == "src" || a.Name.Local == "href" || a.Name.Local == "srcset" {
						t.Errorf("<%s> has %s=%q", e.XMLName.Local, a.Name.Local, a.Value)
					}
				}
				if css := e.Text + e.attr("style"); e.XMLName.Local == "style" || e.attr("style") != "" {
					if strings.Contains(css, "url(") || strings.Contains(css, "@import") {
						t.Errorf("<%s> CSS loads something: %q", e.XMLName.Local, css)
					}
				}
			}
		})
	}
}

// hostile is a run whose names and messages are markup, as a manifest
// may make them.
func hostile() *simulator.Result {
	return &simulator.Result{
		Nodes: []simulator.Node{
			{
				Name: `<script>alert("node")</script>`, NodePool: "a&b", InstanceType: "m5.large", Zone: "z1", CapacityType: "spot",
				PricePerHour: 0.0961, LaunchedAt: "1s", DeletedAt: "30m0s", DeletionReason: `"><img src=x onerror=alert(1)>`, Pods: []string{"default/p"},
			},
			{Name: "n2", NodePool: "reserved-pool", InstanceType: "p4d", Zone: "z2", CapacityType: "reserved", ReservationID: "cr-1", PricePerHour: 12, LaunchedAt: "2s", Pods: []string{}},
		},
		Pods: []simulator.Pod{
			{Name: "default/bound", Node: "n2"},
			{Name: "default/<b>waiting</b>", PendingReason: "NoCompatibleInstanceType: nothing fits </td></tr></table>"},
		},
		Events: []simulator.Event{
			{At: "1s", Kind: "Launched", Object: "nodeclaim/a", Message: "launched <m5.large>"},
			{At: "30m0s", Kind: "NodeDeleted", Object: "node/a", Message: `'quoted' & "double"`},
		},
		Summary: simulator.Summary{
			NodesLaunched: 2, NodesAtEnd: 1, PodsPending: 1, CostPerHourAtEnd: 12, TotalCost: 24.048,
			ByCapacityType: map[string]int{"spot": 0, "on-demand": 0, "reserved": 1}, Duration: "2h0m0s",
		},
		Samples: []simulator.Sample{sample(0, 0, 0, 0, 0, 1), sample(1, 1, 0, 0, 0.0961, 1), sample(1800, 0, 0, 1, 12, 1), sample(7200, 0, 0, 1, 12, 1)},
	}
}

// TestTables reads back every table cell, so markup in a name shows as
// text and cannot break the table.
func TestTables(t *testing.T) {
	r := hostile()
	doc := parse(t, render(t, r, "<i>run</i>"))

	if got := doc.find("h1", ""); len(got) != 1 || got[0].Text != "<i>run</i>" {
		t.Errorf("heading %+v, want the title as text", got)
	}
	summary := map[string]string{}
	for _, d := range doc.find("dl", "summary")[0].find("div", "") {
		summary[d.find("dt", "")[0].Text] = d.find("dd", "")[0].Text
	}
	if diff := cmp.Diff(map[string]string{
		"Duration": "2h0m0s", "Nodes launched": "2", "Nodes at the end": "1", "Spot / on-demand / reserved at the end": "0 / 0 / 1",
		"Pods pending at the end": "1", "Cost per hour at the end": "12.0000", "Total cost": "24.0480",
	}, summary); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}

	var nodes, pending, events [][]string
	for _, n := range r.Nodes {
		nodes = append(nodes, []string{n.Name, n.NodePool, n.InstanceType, n.Zone, n.CapacityType, n.ReservationID,
			fmt.Sprintf("%.4f", n.PricePerHour), n.LaunchedAt, n.DisruptedAt, n.DeletedAt, n.DeletionReason, strconv.Itoa(len(n.Pods))})
	}
	for _, p := range r.Pods {
		if p.Node == "" {
			pending = append(pending, []string{p.Name, p.PendingReason})
		}
	}
	for _, e := range r.Events {
		events = append(events, []string{e.At, e.Kind, e.Object, e.Message})
	}
	for _, tc := range []struct {
		class string
		want  [][]string
	}{{"nodes", nodes}, {"pending", pending}, {"events", events}} {
		if diff := cmp.Diff(tc.want, rows(t, doc, tc.class)); diff != "" {
			t.Errorf("%s table (-want +got):\n%s", tc.class, diff)
		}
	}
}

// TestEmptyRun is a run with nothing in it: no tables, no division by
// zero.
func TestEmptyRun(t *testing.T) {
	doc := parse(t, render(t, &simulator.Result{}, "empty"))
	if tables := doc.find("table", ""); len(tables) != 0 {
		t.Errorf("an empty run has %d tables, want none", len(tables))
	}
	checkCharts(t, doc, nil)
}

// rows are the cells' text of the body of the one table with the class.
func rows(t *testing.T, doc element, class string) [][]string {
	t.Helper()
	tables := doc.find("table", class)
	if len(tables) != 1 {
		t.Fatalf("found %d %s tables, want 1", len(tables), class)
	}
	var out [][]string
	for _, tr := range tables[0].find("tbody", "")[0].find("tr", "") {
		var cells []string
		for _, td := range tr.find("td", "") {
			cells = append(cells, td.Text)
		}
		out = append(out, cells)
	}
	return out
}

// TestScoresTable shows each scored move, its fractions as percentages
// and its decision; a run without one has no such table.
func TestScoresTable(t *testing.T) {
	r := hostile()
	if doc := parse(t, render(t, r, "run")); len(doc.find("table", "scores")) != 0 {
		t.Errorf("a run without scores has a scores table")
	}
	r.ConsolidationScores = []simulator.ConsolidationScore{
		{At: "5m0s", MoveScore: disruption.MoveScore{Method: "SingleNodeConsolidation", NodePool: "<b>pool</b>", NodeClaims: []string{"a", "b"},
			SavingsFraction: 0.125, DisruptionFraction: 0.75, Score: 0.1667, Threshold: 0.5}},
		{At: "6m0s", MoveScore: disruption.MoveScore{Method: "MultiNodeConsolidation", NodePool: "web", NodeClaims: []string{"c"},
			SavingsFraction: 0.5, DisruptionFraction: 0.5, Score: 1, Threshold: 0.5, Taken: true}},
	}
	want := [][]string{
		{"5m0s", "<b>pool</b>", "SingleNodeConsolidation", "a, b", "12.5%", "75.0%", "0.17", "0.50", "skipped"},
		{"6m0s", "web", "MultiNodeConsolidation", "c", "50.0%", "50.0%", "1.00", "0.50", "taken"},
	}
	if diff := cmp.Diff(want, rows(t, parse(t, render(t, r, "run")), "scores")); diff != "" {
		t.Errorf("scores table (-want +got):\n%s", diff)
	}
}

// TestWarningsTable shows each of the result's warnings, escaped; a run
// without one has no such table.
func TestWarningsTable(t *testing.T) {
	r := hostile()
	r.Warnings = nil
	if doc := parse(t, render(t, r, "run")); len(doc.find("table", "warnings")) != 0 {
		t.Errorf("a run without warnings has a warnings table")
	}
	r.Warnings = []simulator.Warning{{
		Object: "nodepool/<b>pool</b>", Source: "pool.yaml, document 2", Field: "metadata.annotations[capstan.dev/rebalance]",
		Message: `pool.yaml, document 2 (NodePool <b>pool</b>): metadata.annotations[capstan.dev/rebalance]: Invalid value: "Replace"`,
	}}
	want := [][]string{{"nodepool/<b>pool</b>", "pool.yaml, document 2", "metadata.annotations[capstan.dev/rebalance]",
		`pool.yaml, document 2 (NodePool <b>pool</b>): metadata.annotations[capstan.dev/rebalance]: Invalid value: "Replace"`}}
	if diff := cmp.Diff(want, rows(t, parse(t, render(t, r, "run")), "warnings")); diff != "" {
		t.Errorf("warnings table (-want +got):\n%s", diff)
	}
}

// TestRequestsTable shows each ProvisioningRequest with when it was
// provisioned or refused; a run without one has no such table.
func TestRequestsTable(t *testing.T) {
	r := hostile()
	if doc := parse(t, render(t, r, "run")); len(doc.find("table", "requests")) != 0 {
		t.Errorf("a run without ProvisioningRequests has a requests table")
	}
	r.ProvisioningRequests = []simulator.ProvisioningRequest{
		{Status: provreq.Status{Name: "default/train", Class: "best-effort-atomic-scale-up.autoscaling.x-k8s.io", Phase: "Booked", Reason: "CapacityIsProvisioned",
			Message: "Capacity is provisioned: 2 NodeClaims registered"}, AppliedAt: "1m0s", ProvisionedAt: "1m20s", NodeClaims: []string{"a", "b"}},
		{Status: provreq.Status{Name: "default/<i>late</i>", Class: "check-capacity.autoscaling.x-k8s.io", Phase: "Failed", Reason: "Expired"}, AppliedAt: "0s", RefusedAt: "1m0s"},
	}
	want := [][]string{
		{"default/train", "best-effort-atomic-scale-up.autoscaling.x-k8s.io", "1m0s", "1m20s", "", "Booked", "CapacityIsProvisioned", "a, b", "Capacity is provisioned: 2 NodeClaims registered"},
		{"default/<i>late</i>", "check-capacity.autoscaling.x-k8s.io", "0s", "", "1m0s", "Failed", "Expired", "", ""},
	}
	if diff := cmp.Diff(want, rows(t, parse(t, render(t, r, "run")), "requests")); diff != "" {
		t.Errorf("requests table (-want +got):\n%s", diff)
	}
}

// TestBuffersTable shows each CapacityBuffer's size, where it is held and
// its cost per hour; a run without one has no such table.
func TestBuffersTable(t *testing.T) {
	r := hostile()
	if doc := parse(t, render(t, r, "run")); len(doc.find("table", "buffers")) != 0 {
		t.Errorf("a run without buffers has a buffers table")
	}
	r.CapacityBuffers = []simulator.BufferCost{{Name: "default/<i>warm</i>", Replicas: 2, Placed: 1, Nodes: map[string]int{"node-a": 1}, CostPerHour: 0.0746}}
	want := [][]string{{"default/<i>warm</i>", "2", "1", "node-a (1)", "0.0746"}}
	if diff := cmp.Diff(want, rows(t, parse(t, render(t, r, "run")), "buffers")); diff != "" {
		t.Errorf("buffers table (-want +got):\n%s", diff)
	}
}
