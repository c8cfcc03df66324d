package lifecycle

import (
	"testing"

	"github.com/capstan-dev/capstan/pkg/effects"
)

func TestAttempts(t *testing.T) {
	a := NewAttempts()
	a.Set(effects.SetLaunchAttempts{NodeClaim: "a", Failures: 2, Last: t0})
	if got, want := a.Get("a"), (LaunchAttempts{Failures: 2, Last: t0}); got != want {
		t.Errorf("Get = %+v, want %+v", got, want)
	}
	a.Set(effects.SetLaunchAttempts{NodeClaim: "a"})
	if got := a.Get("a"); got != (LaunchAttempts{}) {
		t.Errorf("after forgetting, Get = %+v", got)
	}
	a.Set(effects.SetLaunchAttempts{NodeClaim: "b", Failures: 1, Last: t0})
	a.Forget("b")
	if got := a.Get("b"); got != (LaunchAttempts{}) {
		t.Errorf("after Forget, Get = %+v", got)
	}
}
