package ec2endpoint_test

import (
	"strings"
	"testing"

	"github.com/capstan-dev/capstan/pkg/cloudprovider/catalog"
	"github.com/capstan-dev/capstan/test/ec2endpoint"
)

// A catalog type AWS publishes no network limits for cannot be served:
// its pod limit, cards and hypervisor would be invented.
func TestCatalogTypeWithoutPublishedLimits(t *testing.T) {
	types, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	unknown := types[0]
	unknown.Name, unknown.Family = "x9.large", "x9"
	_, err = ec2endpoint.New(ec2endpoint.Options{Profile: profile(), Catalog: append(types, unknown)})
	if err == nil || !strings.Contains(err.Error(), "x9.large: AWS publishes no network limits") {
		t.Fatalf("error %v, want x9.large refused", err)
	}
}
