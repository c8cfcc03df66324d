package v1_test

import (
	"context"
	"testing"

	"k8s.io/utils/ptr"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/test"
)

// transitionMessage is the reference's (pkg/apis/v1/nodepool.go, v1.8).
const transitionMessage = "Cannot transition NodePool between static (replicas set) and dynamic (replicas unset) provisioning modes"

// A NodePool cannot switch between static and dynamic: the rule compares
// with oldSelf, so only an update can break it.
func TestNodePoolCannotSwitchBetweenStaticAndDynamic(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name          string
		before, after *int64
		message       string
	}{
		{"dynamic to static", nil, ptr.To[int64](2), transitionMessage},
		{"static to dynamic", ptr.To[int64](2), nil, transitionMessage},
		{"static scaled", ptr.To[int64](2), ptr.To[int64](5), ""},
		{"static scaled to zero", ptr.To[int64](2), ptr.To[int64](0), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			np := test.NodePool(func(np *v1.NodePool) { np.Spec.Replicas = tc.before })
			if err := env.Client.Create(ctx, np); err != nil {
				t.Fatal(err)
			}
			np.Spec.Replicas = tc.after
			err := env.Client.Update(ctx, np)
			if tc.message == "" {
				if err != nil {
					t.Fatalf("update rejected: %v", err)
				}
				return
			}
			assertRejected(t, err, "spec", tc.message)
		})
	}
}
