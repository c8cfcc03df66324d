package v1_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
)

// The provider writes what it resolved through the status subresource;
// the server fills the reference's defaults, and kubectl get shows
// Ready and Age (Role with -o wide).
func TestStatusAndPrinterColumns(t *testing.T) {
	ctx := context.Background()
	nc := &awsv1.EC2NodeClass{}
	if err := json.Unmarshal(mustJSON(t, nodeClass(t, "").Object), nc); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(ctx, nc); err != nil {
		t.Fatal(err)
	}
	nc.Status = awsv1.EC2NodeClassStatus{
		Subnets:        []awsv1.Subnet{{ID: "subnet-0a1", Zone: "us-west-2a", ZoneID: "usw2-az1"}},
		SecurityGroups: []awsv1.SecurityGroup{{ID: "sg-0a1", Name: "nodes"}},
		AMIs: []awsv1.AMI{{ID: "ami-0a1", Name: "al2023-ami-minimal", Requirements: []corev1.NodeSelectorRequirement{
			{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}},
		}}},
		CapacityReservations: []awsv1.CapacityReservation{{
			AvailabilityZone: "us-west-2a", ID: "cr-0a1", InstanceMatchCriteria: awsv1.InstanceMatchCriteriaTargeted,
			InstanceType: "p5.48xlarge", OwnerID: "111122223333",
		}},
		InstanceProfile: "my-cluster_123",
		Conditions: []metav1.Condition{{
			Type: awsv1.ConditionTypeReady, Status: metav1.ConditionTrue, Reason: "Ready", LastTransitionTime: metav1.Now(),
		}},
	}
	if err := env.Client.Status().Update(ctx, nc); err != nil {
		t.Fatal(err)
	}
	stored := &awsv1.EC2NodeClass{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(nc), stored); err != nil {
		t.Fatal(err)
	}
	cr := stored.Status.CapacityReservations[0]
	if cr.ReservationType != awsv1.CapacityReservationTypeDefault || cr.State != awsv1.CapacityReservationStateActive {
		t.Errorf("reservation type %q, state %q; want the defaults default and active", cr.ReservationType, cr.State)
	}

	names, cells := table(t, nc.Name)
	if diff := cmp.Diff([]string{"Name", "Ready", "Age", "Role"}, names); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{nc.Name, "True"}, cells[:2]); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
	if cells[3] != "KarpenterNodeRole-my-cluster" {
		t.Errorf("role cell = %v", cells[3])
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// table fetches one EC2NodeClass the way kubectl get does and returns its
// columns' names and its row's cells.
func table(t *testing.T, name string) ([]string, []any) {
	t.Helper()
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := cs.RESTClient().Get().AbsPath("/apis", awsv1.Group, "v1", "ec2nodeclasses", name).
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(context.Background())
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
