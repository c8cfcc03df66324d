package provisioning_test

import (
	"testing"
	"time"

	"github.com/capstan-dev/capstan/pkg/provisioning"
)

func benchmarkSolve(b *testing.B, in provisioning.Input) {
	b.ReportAllocs()
	var r provisioning.Result
	start := time.Now()
	for b.Loop() {
		r = provisioning.Solve(in)
	}
	elapsed := time.Since(start).Seconds()
	if len(r.Unplaced) > 0 {
		b.Fatalf("%d pods unplaced: %s %s", len(r.Unplaced), r.Unplaced[0].Reason, r.Unplaced[0].Message)
	}
	b.ReportMetric(float64(len(in.Pods)*b.N)/elapsed, "pods/s")
	b.ReportMetric(float64(len(r.NewNodeClaims)), "nodes")
	b.ReportMetric(cost(r), "cost/h")
	b.ReportMetric(provisioning.LowerBound(in.Pods, in.InstanceTypes["default"]), "lowerbound/h")
}

func BenchmarkSolveReference1000(b *testing.B)    { benchmarkSolve(b, referenceWorkload(1000, 1)) }
func BenchmarkSolveReference5000(b *testing.B)    { benchmarkSolve(b, referenceWorkload(5000, 1)) }
func BenchmarkSolveReference20000(b *testing.B)   { benchmarkSolve(b, referenceWorkload(20000, 1)) }
func BenchmarkSolvePreferences4000(b *testing.B)  { benchmarkSolve(b, preferencesWorkload(4000, 1)) }
func BenchmarkSolveReservation10000(b *testing.B) { benchmarkSolve(b, reservationWorkload(10000, 1)) }
