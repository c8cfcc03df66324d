package v1_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/test"
)

const tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io"

// table fetches one object the way kubectl get does and returns its
// columns' names and its row's cells.
func table(t *testing.T, resource, name string) ([]string, []any) {
	t.Helper()
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := cs.RESTClient().Get().AbsPath("/apis", v1.Group, "v1", resource, name).
		SetHeader("Accept", tableAccept).DoRaw(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tbl := &metav1.Table{}
	if err := json.Unmarshal(raw, tbl); err != nil {
		t.Fatal(err)
	}
	if len(tbl.Rows) != 1 {
		t.Fatalf("table has %d rows, want 1", len(tbl.Rows))
	}
	var names []string
	for _, c := range tbl.ColumnDefinitions {
		names = append(names, c.Name)
	}
	return names, tbl.Rows[0].Cells
}

func TestNodePoolPrinterColumns(t *testing.T) {
	ctx := context.Background()
	np := test.NodePool(func(np *v1.NodePool) { np.Spec.Weight = ptr.To[int32](42) })
	if err := env.Client.Create(ctx, np); err != nil {
		t.Fatal(err)
	}
	np.Status.Resources = corev1.ResourceList{"nodes": resource.MustParse("3"), corev1.ResourceCPU: resource.MustParse("12"), corev1.ResourceMemory: resource.MustParse("48Gi")}
	np.Status.Conditions = []metav1.Condition{{Type: v1.ConditionTypeReady, Status: metav1.ConditionTrue, Reason: "Ready", LastTransitionTime: metav1.Now()}}
	if err := env.Client.Status().Update(ctx, np); err != nil {
		t.Fatal(err)
	}
	names, cells := table(t, "nodepools", np.Name)
	// The reference's columns (pkg/apis/v1/nodepool.go, v1.14.1); Nodes
	// reads status.nodes (printcolumns_v114_test.go).
	if diff := cmp.Diff([]string{"Name", "NodeClass", "Nodes", "Ready", "Age", "Weight", "CPU", "Memory"}, names); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{np.Name, "default", "True", float64(42), "12", "48Gi"}, []any{cells[0], cells[1], cells[3], cells[5], cells[6], cells[7]}); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
}

func TestNodeClaimPrinterColumns(t *testing.T) {
	ctx := context.Background()
	nc := test.NodeClaim(func(nc *v1.NodeClaim) {
		nc.Labels = map[string]string{v1.LabelInstanceType: "c5.xlarge", v1.CapacityTypeLabelKey: v1.CapacityTypeSpot, v1.LabelZone: "us-west-2a", v1.NodePoolLabelKey: "default"}
	})
	if err := env.Client.Create(ctx, nc); err != nil {
		t.Fatal(err)
	}
	nc.Status.NodeName = "node-1"
	nc.Status.ImageID = "ami-1"
	nc.Status.ProviderID = "sim:///i-1"
	nc.Status.Conditions = []metav1.Condition{
		{Type: v1.ConditionTypeReady, Status: metav1.ConditionFalse, Reason: "NotLaunched", LastTransitionTime: metav1.Now()},
		{Type: v1.ConditionTypeDrifted, Status: metav1.ConditionTrue, Reason: "NodeClassDrift", LastTransitionTime: metav1.Now()},
	}
	if err := env.Client.Status().Update(ctx, nc); err != nil {
		t.Fatal(err)
	}
	names, cells := table(t, "nodeclaims", nc.Name)
	// The reference's columns (pkg/apis/v1/nodeclaim.go, v1.14.1).
	if diff := cmp.Diff([]string{"Name", "Type", "Capacity", "Zone", "Node", "Ready", "Age", "ImageID", "ID", "NodePool", "NodeClass", "Drifted"}, names); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	want := []any{nc.Name, "c5.xlarge", "spot", "us-west-2a", "node-1", "False", "ami-1", "sim:///i-1", "default", nc.Spec.NodeClassRef.Name, "True"}
	if diff := cmp.Diff(want, append(cells[:6:6], cells[7:]...)); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
}

func keyFor(name string) client.ObjectKey { return client.ObjectKey{Name: name} }
