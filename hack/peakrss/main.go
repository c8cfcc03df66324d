// Command peakrss reports the peak resident memory of one 20,000-pod
// solve of the reference workload. It builds the provisioning benchmark
// binary, runs BenchmarkSolveReference20000 once in a child process and
// prints the child's maximum RSS as the kernel accounts it (getrusage
// ru_maxrss), the same figure `/usr/bin/time -v` shows. The figure covers
// the whole process: the generated workload and the Go runtime included.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
)

func main() {
	bench := flag.String("bench", "BenchmarkSolveReference20000$", "benchmark to run")
	flag.Parse()
	if err := run(*bench); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(bench string) error {
	dir, err := os.MkdirTemp("", "capstan-peakrss-")
	if err != nil {
		return fmt.Errorf("creating temp dir, %w", err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	bin := filepath.Join(dir, "provisioning.test")
	build := exec.Command("go", "test", "-c", "-o", bin, "./pkg/provisioning")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("building benchmark binary, %w", err)
	}
	cmd := exec.Command(bin, "-test.run=^$", "-test.bench="+bench, "-test.benchtime=1x", "-test.benchmem")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("running %s, %w", bench, err)
	}
	usage, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return errors.New("no resource usage for the benchmark process")
	}
	fmt.Printf("peak RSS of %s: %.1f MB\n", bench, float64(usage.Maxrss)/1024)
	return nil
}
