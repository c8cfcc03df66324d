package simulator

import (
	"testing"
	"time"
)

func TestOffsets(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		at   time.Duration
		want string
	}{
		{0, "0s"}, {1500 * time.Microsecond, "1ms"}, {90 * time.Second, "1m30s"}, {2 * time.Hour, "2h0m0s"},
	} {
		if got := offset(t0, t0.Add(tc.at)); got != tc.want {
			t.Errorf("offset %v: %q, want %q", tc.at, got, tc.want)
		}
	}
	if got := byCapacityType(); len(got) != 3 {
		t.Errorf("by capacity type %v: every key present", got)
	}
}
