//go:build unix

package sim_test

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
)

// An operation waits while another process holds the state file's lock.
func TestOperationsWaitForTheLock(t *testing.T) {
	f := newFixture(t, profile(simv1alpha1.CloudStyleAWS))
	lock, err := os.OpenFile(f.state+".lock", os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = lock.Close() }()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := f.cloud.Create(context.Background(), claim("nc", in(v1.LabelInstanceType, "m5.large")))
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("create returned (%v) while another holder had the lock", err)
	case <-time.After(200 * time.Millisecond):
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
