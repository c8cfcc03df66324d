package report

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestDurationLabel(t *testing.T) {
	for _, tc := range []struct {
		in   time.Duration
		want string
	}{
		{0, "0s"},
		{10 * time.Second, "10s"},
		{90 * time.Second, "1m30s"},
		{30 * time.Minute, "30m"},
		{time.Hour, "1h"},
		{90 * time.Minute, "1h30m"},
		{time.Hour + 10*time.Second, "1h0m10s"},
		{48 * time.Hour, "48h"},
	} {
		if got := durationLabel(tc.in); got != tc.want {
			t.Errorf("durationLabel(%s) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestTimeTicks(t *testing.T) {
	for _, tc := range []struct {
		name string
		xMax float64
		want []string
	}{
		{"no time passed", 0, []string{"0s"}},
		{"a minute", 60, []string{"0s", "10s", "20s", "30s", "40s", "50s", "1m"}},
		{"two hours", 7200, []string{"0s", "15m", "30m", "45m", "1h", "1h15m", "1h30m", "1h45m", "2h"}},
		{"not a round end", 100, []string{"0s", "15s", "30s", "45s", "1m", "1m15s", "1m30s"}},
		{"a month, in whole days", 30 * 86400, []string{"0s", "96h", "192h", "288h", "384h", "480h", "576h", "672h"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ticks := timeTicks(tc.xMax)
			var labels []string
			for _, tk := range ticks {
				labels = append(labels, tk.Label)
			}
			if diff := cmp.Diff(tc.want, labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
			if ticks[0].Pos != coord(plotLeft) {
				t.Errorf("0s is at x %s, want the plot's left edge %d", ticks[0].Pos, plotLeft)
			}
		})
	}
}

func TestValueTicks(t *testing.T) {
	// The plot spans y 228 (value 0) to 36 (the maximum): 192 units.
	for _, tc := range []struct {
		name   string
		yMax   float64
		counts bool
		want   []tick
	}{
		{"all zero", 0, true, []tick{{"228.00", "0"}}},
		{"one", 1, true, []tick{{"228.00", "0"}, {"36.00", "1"}}},
		{"counts never get fractional ticks", 2, true, []tick{{"228.00", "0"}, {"132.00", "1"}, {"36.00", "2"}}},
		{"five", 5, true, []tick{{"228.00", "0"}, {"189.60", "1"}, {"151.20", "2"}, {"112.80", "3"}, {"74.40", "4"}, {"36.00", "5"}}},
		{"ten", 10, true, []tick{{"228.00", "0"}, {"189.60", "2"}, {"151.20", "4"}, {"112.80", "6"}, {"74.40", "8"}, {"36.00", "10"}}},
		{"prices to four decimals; 0.08, too near the top, is left out", 0.0832, false, []tick{
			{"228.00", "0"}, {"181.85", "0.02"}, {"135.69", "0.04"}, {"89.54", "0.06"}, {"36.00", "0.0832"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, valueTicks(tc.yMax, tc.counts)); diff != "" {
				t.Errorf("ticks (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStepPoints(t *testing.T) {
	for _, tc := range []struct {
		name   string
		xs, ys []float64
		want   string
	}{
		{"no samples", nil, nil, ""},
		{"one sample", []float64{72}, []float64{36}, "72.00,36.00 72.00,36.00"},
		{
			"each sample rises from the value before it", []float64{72, 100, 936}, []float64{228, 36, 132},
			"72.00,228.00 72.00,228.00 100.00,228.00 100.00,36.00 936.00,36.00 936.00,132.00",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, stepPoints(tc.xs, tc.ys)); diff != "" {
				t.Errorf("points (-want +got):\n%s", diff)
			}
		})
	}
}
