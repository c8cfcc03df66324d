package test

import (
	"testing"
	"time"

	"github.com/capstan-dev/capstan/pkg/providers/aws"
)

func TestProviderEnv(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	env := ProviderEnv(nil, now)
	if !env.Clock.Now().Equal(now) || env.Unavailable == nil || env.Metrics == nil {
		t.Errorf("ProviderEnv() = %+v, want a clock at %s, a cache and a registry", env, now)
	}
}

// The flags reach the provider: without them it is invalid, with them
// valid.
func TestParseProviderFlags(t *testing.T) {
	p := aws.New()
	ParseProviderFlags(t, p)
	if p.Validate() == nil {
		t.Fatal("Validate() with no --cluster-name = nil, want an error")
	}
	ParseProviderFlags(t, p, "--cluster-name=prod")
	if err := p.Validate(); err != nil {
		t.Errorf("Validate() with --cluster-name = %v", err)
	}
}
