package cloudprovider_test

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/fake"
)

// plain is a provider without an interruption source.
type plain struct{ cloudprovider.CloudProvider }

// wrapper is a decorator that does not itself implement InterruptionSource.
type wrapper struct{ cloudprovider.CloudProvider }

func (w wrapper) Unwrap() cloudprovider.CloudProvider { return w.CloudProvider }

func TestAsInterruptionSource(t *testing.T) {
	source := fake.New()
	cases := []struct {
		name string
		cp   cloudprovider.CloudProvider
		want cloudprovider.InterruptionSource // nil: none
	}{
		{"nil", nil, nil},
		{"source itself", source, source},
		{"through one decorator", wrapper{source}, source},
		{"through two decorators", wrapper{wrapper{source}}, source},
		{"provider without a source", plain{source}, nil},
		{"decorator of a provider without a source", wrapper{plain{source}}, nil},
		{"decorator of nothing", wrapper{}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := cloudprovider.AsInterruptionSource(tc.cp)
			if ok != (tc.want != nil) || got != tc.want {
				t.Errorf("AsInterruptionSource() = %v, %v; want %v", got, ok, tc.want)
			}
			if ok {
				if _, err := got.Interruptions(context.Background()); err != nil {
					t.Errorf("Interruptions() error %v", err)
				}
			}
		})
	}
}

func TestInterruptionKindsAreDistinct(t *testing.T) {
	kinds := cloudprovider.InterruptionKinds()
	if len(kinds) != 10 || sets.New(kinds...).Len() != len(kinds) {
		t.Errorf("InterruptionKinds() = %v, want 10 distinct kinds (decision 6 and the AWS kinds)", kinds)
	}
}
