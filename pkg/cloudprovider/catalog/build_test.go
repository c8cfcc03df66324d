package catalog

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The checked-in file is exactly what the facts in families_*.go render
// to, so editing one without the other fails here.
func TestCheckedInJSONIsGenerated(t *testing.T) {
	want, err := Generate()
	if err != nil {
		t.Fatalf("Generate() = %v", err)
	}
	got, err := data.ReadFile(dataFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		diff := cmp.Diff(strings.Split(string(want), "\n"), strings.Split(string(got), "\n"))
		t.Errorf("%s is stale; run go run ./hack/catalog (-generated +checked in):\n%s", dataFile, diff)
	}
}

func TestGenerateIsDeterministic(t *testing.T) {
	first, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		again, err := Generate()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first, again) {
			t.Fatal("two Generate() calls differ")
		}
	}
}

func TestSizeVCPU(t *testing.T) {
	for _, tc := range []struct {
		size  string
		metal int
		want  int
	}{
		{"medium", 0, 1},
		{"large", 0, 2},
		{"xlarge", 0, 4},
		{"2xlarge", 0, 8},
		{"9xlarge", 0, 36},
		{"48xlarge", 0, 192},
		{"metal", 96, 96},
		{"huge", 0, 0},
		{"0xlarge", 0, 0},
		{"2large", 0, 0},
	} {
		if got := sizeVCPU(tc.size, tc.metal); got != tc.want {
			t.Errorf("sizeVCPU(%q, %d) = %d, want %d", tc.size, tc.metal, got, tc.want)
		}
	}
}

// The values are those of the AWS VPC CNI's eni-max-pods table.
func TestMaxPods(t *testing.T) {
	for _, tc := range []struct {
		name string
		eni  eni
		want int
	}{
		{"m7g.medium", nitroENI(1), 8},
		{"m5.large", nitroENI(2), 29},
		{"m5.2xlarge", nitroENI(8), 58},
		{"c5.9xlarge", nitroENI(36), 234},
		{"m5.24xlarge", nitroENI(96), 737},
		{"t3.large", eni{3, 12}, 35},
		{"m4.large", eni{2, 10}, 20},
		{"g5.48xlarge", eni{7, 50}, 345},
	} {
		if got := tc.eni.maxPods(); got != tc.want {
			t.Errorf("%s maxPods() = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestRoundPrice(t *testing.T) {
	for _, tc := range []struct{ in, want float64 }{
		{0.096, 0.096},
		{0.096 * 1.115, 0.107},
		{0.03625, 0.0363},
		{4.608 * 1.29, 5.9443},
	} {
		if got := roundPrice(tc.in); got != tc.want {
			t.Errorf("roundPrice(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestRegionsAreSortedAndComplete(t *testing.T) {
	want := []string{"ap-northeast-1", "eu-central-1", "eu-west-1", "us-east-1", "us-east-2", "us-west-2"}
	if diff := cmp.Diff(want, Regions()); diff != "" {
		t.Errorf("Regions() (-want +got):\n%s", diff)
	}
}
