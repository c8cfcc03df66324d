package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/capstan-dev/capstan/pkg/simulator"
)

// Chart geometry in SVG user units; the viewBox scales it to the page.
const (
	chartWidth  = 960
	chartHeight = 260
	// plotTop leaves room for the legend above the plot area.
	plotTop    = 36
	plotLeft   = 72
	plotRight  = chartWidth - 24
	plotBottom = chartHeight - 32
	// maxXTicks bounds the time labels so they never overlap.
	maxXTicks = 9
	// legendSpacing is the width of one legend entry.
	legendSpacing = 150
)

// chart is one SVG step chart, every number already formatted.
type chart struct {
	// ID names the chart in data-chart and prefixes its element ids.
	ID    string
	Title string
	// Desc is the chart in words, for screen readers.
	Desc string
	// YMax is the plotted data's maximum, exact, which the top of the
	// plot area stands for; it is 0 when every value is.
	YMax   string
	XTicks []tick
	YTicks []tick
	Series []series
	Box    geometry
}

// tick is one axis label at a position: x on the time axis, y on the
// value axis.
type tick struct {
	Pos   string
	Label string
}

// series is one step line.
type series struct {
	Name    string
	Label   string
	Color   string
	Dash    string
	Max     string
	LegendX string
	// Points are two per sample, as stepPoints says.
	Points string
}

// seriesSpec says what to plot: one quantity of every sample.
type seriesSpec struct {
	name, label, color, dash string
	value                    func(simulator.Sample) float64
}

// geometry is what the template draws the frame and axes with.
type geometry struct {
	Width, Height, Left, Top, Right, Bottom, PlotWidth, PlotHeight int
}

// newChart plots specs over the samples' virtual time. Counts get whole
// number ticks; other values get up to four decimals, as prices do.
func newChart(id, title string, samples []simulator.Sample, counts bool, specs ...seriesSpec) chart {
	xMax, yMax := 0.0, 0.0
	for _, s := range samples {
		xMax = math.Max(xMax, s.Seconds)
		for _, spec := range specs {
			yMax = math.Max(yMax, spec.value(s))
		}
	}
	xs := make([]float64, len(samples))
	for i, s := range samples {
		xs[i] = scale(s.Seconds, xMax, plotLeft, plotRight)
	}
	c := chart{ID: id, Title: title, YMax: exact(yMax), XTicks: timeTicks(xMax), YTicks: valueTicks(yMax, counts),
		Box: geometry{chartWidth, chartHeight, plotLeft, plotTop, plotRight, plotBottom, plotRight - plotLeft, plotBottom - plotTop}}
	var maxima []string
	for i, spec := range specs {
		ys := make([]float64, len(samples))
		seriesMax := 0.0
		for j, s := range samples {
			v := spec.value(s)
			seriesMax = math.Max(seriesMax, v)
			ys[j] = scale(v, yMax, plotBottom, plotTop)
		}
		c.Series = append(c.Series, series{
			Name: spec.name, Label: spec.label, Color: spec.color, Dash: spec.dash,
			Max: exact(seriesMax), LegendX: coord(float64(plotLeft + i*legendSpacing)), Points: stepPoints(xs, ys),
		})
		maxima = append(maxima, spec.label+" "+valueLabel(seriesMax, counts))
	}
	end := "0s"
	if len(samples) > 0 {
		end = samples[len(samples)-1].At
	}
	c.Desc = fmt.Sprintf("%s over %s of virtual time in %d samples, each value held until the next; highest: %s.",
		title, end, len(samples), strings.Join(maxima, ", "))
	return c
}

// scale maps v in [0, max] onto [from, to]; with max 0 everything sits
// at from, so an all-zero series lies on the axis instead of dividing by
// zero.
func scale(v, maxV, from, to float64) float64 {
	if maxV == 0 {
		return from
	}
	return from + v/maxV*(to-from)
}

// stepPoints draws values that hold until the next sample. Sample i
// gives two points at its own x: point 2i at the previous sample's y,
// point 2i+1 at its own y (the first sample's pair both at its own), so
// the segment 2i→2i+1 is the change and 2i+1→2i+2 the value holding.
func stepPoints(xs, ys []float64) string {
	var b strings.Builder
	for i := range xs {
		prev := ys[i]
		if i > 0 {
			prev = ys[i-1]
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s,%s %s,%s", coord(xs[i]), coord(prev), coord(xs[i]), coord(ys[i]))
	}
	return b.String()
}

// timeTicks labels the time axis at a round step, from 0 to xMax
// seconds.
func timeTicks(xMax float64) []tick {
	step := time.Duration(0)
	for _, d := range []time.Duration{
		time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
		time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
		time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour,
	} {
		if xMax/d.Seconds() < maxXTicks {
			step = d
			break
		}
	}
	if step == 0 {
		day := 24 * time.Hour
		step = day * time.Duration(math.Ceil(xMax/day.Seconds()/(maxXTicks-1)))
	}
	var ticks []tick
	for at := time.Duration(0); at.Seconds() <= xMax; at += step {
		ticks = append(ticks, tick{Pos: coord(scale(at.Seconds(), xMax, plotLeft, plotRight)), Label: durationLabel(at)})
	}
	return ticks
}

// durationLabel drops the zero tails Duration.String keeps: 1h, 30m,
// 1h30m, 90s stays 1m30s.
func durationLabel(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// valueTicks labels the value axis at a round step below yMax and at
// yMax itself, the top of the plot, so the maximum reads exactly. A
// round tick within a tenth of the top is left out so labels don't
// collide.
func valueTicks(yMax float64, counts bool) []tick {
	if yMax == 0 {
		return []tick{{Pos: coord(plotBottom), Label: "0"}}
	}
	step := niceStep(yMax / 5)
	if counts {
		step = math.Max(step, 1)
	}
	var ticks []tick
	for k := 0; float64(k)*step <= 0.9*yMax; k++ {
		v := float64(k) * step
		ticks = append(ticks, tick{Pos: coord(scale(v, yMax, plotBottom, plotTop)), Label: valueLabel(v, counts)})
	}
	return append(ticks, tick{Pos: coord(plotTop), Label: valueLabel(yMax, counts)})
}

// niceStep rounds raw up to 1, 2 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	unit := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, f := range []float64{1, 2, 5} {
		if raw <= f*unit {
			return f * unit
		}
	}
	return 10 * unit
}

// valueLabel prints a count whole and anything else, prices, to at most
// four decimals, as the text summary does.
func valueLabel(v float64, counts bool) string {
	if counts {
		return strconv.Itoa(int(math.Round(v)))
	}
	return strconv.FormatFloat(math.Round(v*1e4)/1e4, 'f', -1, 64)
}

// exact prints v so that parsing it gives v back, for data attributes
// that tests and tools compare with the JSON.
func exact(v float64) string {
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// coord prints an SVG coordinate; a hundredth of a unit is far below a
// pixel.
func coord(v float64) string {
	return strconv.FormatFloat(v, 'f', 2, 64)
}
