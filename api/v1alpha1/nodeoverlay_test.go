package v1alpha1_test

import (
	"context"
	"strings"
	"testing"

	"github.com/capstan-dev/capstan/pkg/test"
)

// The reference's invalid examples are refused by the CRD with its
// messages, or by RuntimeValidate where the CRD cannot tell.
func TestInvalidNodeOverlaysAreRejected(t *testing.T) {
	ctx := context.Background()
	for _, tc := range test.InvalidNodeOverlays() {
		t.Run(tc.Name, func(t *testing.T) {
			err := env.Client.Create(ctx, tc.Overlay)
			if tc.RuntimeInvalid {
				if err != nil {
					t.Fatalf("rejected by the CRD: %v", err)
				}
				if tc.Overlay.RuntimeValidate() == nil {
					t.Fatal("RuntimeValidate accepted it")
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted; want a rejection with %q", tc.Message)
			}
			if !strings.Contains(err.Error(), tc.Message) {
				t.Fatalf("error %q\ndoes not contain %q", err, tc.Message)
			}
		})
	}
}

// The reference's valid examples are accepted by the CRD and by
// RuntimeValidate.
func TestValidNodeOverlaysAreAccepted(t *testing.T) {
	ctx := context.Background()
	for _, tc := range test.ValidNodeOverlays() {
		t.Run(tc.Name, func(t *testing.T) {
			if err := env.Client.Create(ctx, tc.Overlay); err != nil {
				t.Fatalf("rejected: %v", err)
			}
			if err := tc.Overlay.RuntimeValidate(); err != nil {
				t.Fatalf("RuntimeValidate: %v", err)
			}
		})
	}
}
