package cloudprovider_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/fake"
	"github.com/capstan-dev/capstan/pkg/test"
)

// notReady fails GetInstanceTypes as a provider does for a NodeClass that
// is missing or not ready, or with any other error.
type notReady struct {
	*fake.CloudProvider
	err error
}

func (n notReady) GetInstanceTypes(context.Context, *v1.NodePool) ([]*cloudprovider.InstanceType, error) {
	return nil, n.err
}

func TestInstanceTypesByNodePool(t *testing.T) {
	it := &cloudprovider.InstanceType{Name: "m5.large"}
	served := test.NodePool(func(np *v1.NodePool) { np.Name = "served" })
	foreign := test.NodePool(func(np *v1.NodePool) {
		np.Name = "foreign"
		np.Spec.Template.Spec.NodeClassRef = &v1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"}
	})
	pools := []v1.NodePool{*served, *foreign}

	its, unusable, err := cloudprovider.InstanceTypesByNodePool(context.Background(), fake.New(it), pools)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string][]*cloudprovider.InstanceType{"served": {it}}, its); diff != "" {
		t.Errorf("instance types (-want +got):\n%s", diff)
	}
	if len(unusable) != 1 || !strings.Contains(unusable["foreign"], "is not served by cloud provider") {
		t.Errorf("unusable %v, want foreign: its kind is not served", unusable)
	}

	// A NodeClass that is not ready makes its NodePool unusable; any other
	// error fails the gathering.
	cp := notReady{CloudProvider: fake.New(it), err: cloudprovider.NewNodeClassNotReadyError("default", errors.New("not ready"))}
	its, unusable, err = cloudprovider.InstanceTypesByNodePool(context.Background(), cp, []v1.NodePool{*served})
	if err != nil || len(its) != 0 || unusable["served"] == "" {
		t.Errorf("not ready: %v, %v, %v; want served unusable", its, unusable, err)
	}
	cp.err = errors.New("throttled")
	if _, _, err := cloudprovider.InstanceTypesByNodePool(context.Background(), cp, []v1.NodePool{*served}); err == nil {
		t.Error("an error other than not ready must fail")
	}
}

// NodePools on one NodeClass share one answer: the cloud is asked once,
// so a NodePool adds no copy of the instance types (docs/simulate.md,
// "Scale").
func TestInstanceTypesByNodePoolAsksOncePerNodeClass(t *testing.T) {
	it := &cloudprovider.InstanceType{Name: "m5.large"}
	var pools []v1.NodePool
	for _, name := range []string{"a", "b", "c"} {
		pools = append(pools, *test.NodePool(func(np *v1.NodePool) { np.Name = name }))
	}
	other := test.NodePool(func(np *v1.NodePool) { np.Name = "other" })
	other.Spec.Template.Spec.NodeClassRef.Name = "other"
	pools = append(pools, *other)
	cp := fake.New(it)
	its, _, err := cloudprovider.InstanceTypesByNodePool(context.Background(), cp, pools)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(cp.GetInstanceTypesCalls); got != 2 {
		t.Errorf("asked the cloud %d times for 2 NodeClasses, want 2", got)
	}
	if len(its) != 4 || &its["a"][0] != &its["c"][0] || &its["a"][0] == &its["other"][0] {
		t.Errorf("NodePools on one NodeClass do not share its instance types: %v", its)
	}
}
