package cloudprovider_test

import (
	"context"
	"errors"
	"testing"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/fake"
)

// failingGet is a cloud whose Get fails.
type failingGet struct{ cloudprovider.CloudProvider }

func (failingGet) Get(context.Context, string) (*v1.NodeClaim, error) {
	return nil, errors.New("throttled")
}

func TestInstanceGone(t *testing.T) {
	cloud := fake.New()
	cloud.Created = map[string]*v1.NodeClaim{"fake://running": {}}
	for _, tc := range []struct {
		name       string
		providerID string
		failing    bool
		want       bool
		wantErr    bool
	}{
		{"never launched", "", false, true, false},
		{"running", "fake://running", false, false, false},
		{"gone", "fake://none", false, true, false},
		{"the cloud fails", "fake://running", true, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cp cloudprovider.CloudProvider = cloud
			if tc.failing {
				cp = failingGet{cloud}
			}
			nc := &v1.NodeClaim{}
			nc.Status.ProviderID = tc.providerID
			got, err := cloudprovider.InstanceGone(context.Background(), cp, nc)
			if got != tc.want || (err != nil) != tc.wantErr {
				t.Errorf("InstanceGone = %v, %v; want %v, error %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}
