package report_test

import (
	"context"
	"fmt"
	"image/png"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestChromiumRendersTheReport opens the report of a real run in
// headless Chromium and checks the screenshot shows something: enough
// non-white pixels and colors, and every series' own stroke color, so
// the SVG charts were drawn and not only the text. Chromium is Debian's
// package, which hack/tools.sh installs; CI must have it.
func TestChromiumRendersTheReport(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") == "" {
			t.Skip("chromium is not installed; make tools installs it")
		}
		t.Fatalf("chromium is not installed, which hack/tools.sh does: %v", err)
	}
	dir := t.TempDir()
	page, shot := filepath.Join(dir, "report.html"), filepath.Join(dir, "report.png")
	doc := render(t, example(t, "spot-shortage"), "spot-shortage")
	if err := os.WriteFile(page, doc, 0o600); err != nil {
		t.Fatal(err)
	}

	// Two shared cores can make a cold start slow; a minute is ample.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	// The background flags keep Chromium off the network, which is
	// closed here; a fresh profile keeps runs independent.
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--disable-gpu", "--no-sandbox", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--hide-scrollbars", "--user-data-dir="+filepath.Join(dir, "profile"),
		"--screenshot="+shot, "--window-size=1200,2000", (&url.URL{Scheme: "file", Path: page}).String())
	// Chromium's helper processes may hold the output open after a kill.
	cmd.WaitDelay = 5 * time.Second
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}

	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("decoding the screenshot: %v", err)
	}
	colors, inked := map[string]int{}, 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			r, g, bl = r>>8, g>>8, bl>>8
			colors[fmt.Sprintf("#%02x%02x%02x", r, g, bl)]++
			if r < 240 || g < 240 || bl < 240 {
				inked++
			}
		}
	}
	share := float64(inked) / float64(b.Dx()*b.Dy())
	t.Logf("screenshot %dx%d: %.1f%% of pixels not white, %d distinct colors", b.Dx(), b.Dy(), 100*share, len(colors))
	if share < 0.02 || len(colors) < 32 {
		t.Errorf("the screenshot is blank or nearly: %.2f%% of pixels not white, %d colors", 100*share, len(colors))
	}
	for _, line := range parse(t, doc).find("polyline", "series") {
		stroke := line.attr("stroke")
		t.Logf("series %s (%s): %d pixels", line.attr("data-series"), stroke, colors[stroke])
		if colors[stroke] < 20 {
			t.Errorf("series %s's color %s is on %d pixels; its line was not drawn", line.attr("data-series"), stroke, colors[stroke])
		}
	}
}
