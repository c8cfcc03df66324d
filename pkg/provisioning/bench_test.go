package provisioning_test

import (
	"syscall"
	"testing"
	"time"

	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/provisioning/checker"
)

// benchmarkSolve times whole solves of in, then reports the result's size,
// price and the fractional lower bound, the process's peak RSS so far
// (run one benchmark per process to read it as that solve's), and checks
// the result with the independent checker and its price against ceiling
// × the lower bound (0: not checked), untimed. The unit suite asserts
// the ceiling up to 5,000 pods; the larger solves are checked here.
func benchmarkSolve(b *testing.B, in provisioning.Input, ceiling float64) {
	b.ReportAllocs()
	var r provisioning.Result
	start, cpuStart := time.Now(), cpuSeconds()
	for b.Loop() {
		r = provisioning.Solve(in)
	}
	elapsed, cpu := time.Since(start).Seconds(), cpuSeconds()-cpuStart
	b.StopTimer()
	if len(r.Unplaced) > 0 {
		b.Fatalf("%d pods unplaced: %s %s", len(r.Unplaced), r.Unplaced[0].Reason, r.Unplaced[0].Message)
	}
	bound := provisioning.LowerBound(in.Pods, in.InstanceTypes["default"])
	b.ReportMetric(float64(len(in.Pods)*b.N)/elapsed, "pods/s")
	// CPU time (every thread's, the collector's included) is what a
	// shared, loaded host disturbs least.
	b.ReportMetric(cpu/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(len(r.NewNodeClaims)), "nodes")
	b.ReportMetric(cost(r), "cost/h")
	b.ReportMetric(bound, "lowerbound/h")
	b.ReportMetric(cost(r)/bound, "cost/bound")
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err == nil {
		b.ReportMetric(float64(usage.Maxrss)/1024, "peak-MB")
	}
	if ceiling > 0 && cost(r) > ceiling*bound {
		b.Errorf("cost %.1f/h is more than %.2f × the lower bound %.1f/h", cost(r), ceiling, bound)
	}
	if err := checker.Check(in, r); err != nil {
		b.Fatal(err)
	}
}

// cpuSeconds is the CPU time the process has used, user and system.
func cpuSeconds() float64 {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano()).Seconds()
}

// quality is the ceiling on cost ÷ lower bound for the reference pods.
const quality = 1.15

func BenchmarkSolveReference1000(b *testing.B) {
	benchmarkSolve(b, referenceWorkload(1000, 1), quality)
}
func BenchmarkSolveReference5000(b *testing.B) {
	benchmarkSolve(b, referenceWorkload(5000, 1), quality)
}
func BenchmarkSolveReference20000(b *testing.B) {
	benchmarkSolve(b, referenceWorkload(20000, 1), quality)
}
func BenchmarkSolveReference100000(b *testing.B) {
	benchmarkSolve(b, referenceWorkload(100000, 1), quality)
}

// The reference workload's pods over the simulated cloud's catalog.
func BenchmarkSolveCatalog1000(b *testing.B)  { benchmarkSolve(b, catalogWorkload(1000, 1), quality) }
func BenchmarkSolveCatalog5000(b *testing.B)  { benchmarkSolve(b, catalogWorkload(5000, 1), quality) }
func BenchmarkSolveCatalog20000(b *testing.B) { benchmarkSolve(b, catalogWorkload(20000, 1), quality) }

func BenchmarkSolvePreferences4000(b *testing.B) {
	benchmarkSolve(b, preferencesWorkload(4000, 1), 0)
}
func BenchmarkSolveReservation10000(b *testing.B) {
	benchmarkSolve(b, reservationWorkload(10000, 1), 0)
}
