package ec2nodeclass

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
)

// The placement group the selector names, by name or id, available ones
// only, into the status with PlacementGroupReady, as the reference's
// placement group reconciler decides; a failed call keeps what was
// resolved for this generation.
func TestPlacementGroup(t *testing.T) {
	api := &fakeEC2{placementGroups: []ec2types.PlacementGroup{
		{GroupId: aws.String("pg-1"), GroupName: aws.String("training"), Strategy: ec2types.PlacementStrategyCluster, State: ec2types.PlacementGroupStateAvailable},
		{GroupId: aws.String("pg-2"), GroupName: aws.String("racks"), Strategy: ec2types.PlacementStrategyPartition, PartitionCount: aws.Int32(3), State: ec2types.PlacementGroupStateAvailable},
		{GroupId: aws.String("pg-3"), GroupName: aws.String("going"), Strategy: ec2types.PlacementStrategySpread, State: ec2types.PlacementGroupStateDeleting},
	}}
	training := &awsv1.PlacementGroup{ID: "pg-1", Name: "training", Strategy: "cluster"}
	for _, tc := range []struct {
		name   string
		sel    *awsv1.PlacementGroupSelector
		want   *awsv1.PlacementGroup
		status metav1.ConditionStatus
		reason string
	}{
		{"no selector", nil, nil, metav1.ConditionTrue, awsv1.ConditionTypePlacementGroupReady},
		{"by name", &awsv1.PlacementGroupSelector{Name: ptr.To("training")}, training, metav1.ConditionTrue, awsv1.ConditionTypePlacementGroupReady},
		{"by id", &awsv1.PlacementGroupSelector{ID: ptr.To("pg-2")}, &awsv1.PlacementGroup{ID: "pg-2", Name: "racks", Strategy: "partition", PartitionCount: 3},
			metav1.ConditionTrue, awsv1.ConditionTypePlacementGroupReady},
		{"a group being deleted", &awsv1.PlacementGroupSelector{Name: ptr.To("going")}, nil, metav1.ConditionFalse, ReasonPlacementGroupNotFound},
		{"no such group", &awsv1.PlacementGroupSelector{ID: ptr.To("pg-404")}, nil, metav1.ConditionFalse, ReasonPlacementGroupNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nc := ec2NodeClass(func(nc *awsv1.EC2NodeClass) { nc.Spec.PlacementGroupSelector = tc.sel })
			found := Gather(context.Background(), api, api, nc, "")
			if found.PlacementGroupsErr != nil {
				t.Fatal(found.PlacementGroupsErr)
			}
			status := Resolve(nc, found, start)
			if diff := cmp.Diff(tc.want, status.PlacementGroup); diff != "" {
				t.Errorf("placement group (-want +got):\n%s", diff)
			}
			c := meta.FindStatusCondition(status.Conditions, awsv1.ConditionTypePlacementGroupReady)
			if c == nil || c.Status != tc.status || c.Reason != tc.reason {
				t.Errorf("PlacementGroupReady %+v, want %s/%s", c, tc.status, tc.reason)
			}
			if ready := meta.FindStatusCondition(status.Conditions, awsv1.ConditionTypeReady); tc.status == metav1.ConditionFalse && (ready.Status != metav1.ConditionFalse || !strings.Contains(ready.Message, "PlacementGroupReady=False")) {
				t.Errorf("Ready %+v, want it False for the placement group", ready)
			}
		})
	}

	nc := ec2NodeClass(func(nc *awsv1.EC2NodeClass) {
		nc.Spec.PlacementGroupSelector = &awsv1.PlacementGroupSelector{Name: ptr.To("training")}
	})
	nc.Status = Resolve(nc, Gather(context.Background(), api, api, nc, ""), start)
	api.setFail("DescribePlacementGroups", errors.New("RequestLimitExceeded"))
	found := Gather(context.Background(), api, api, nc, "")
	if found.Err() == nil {
		t.Fatal("a failed DescribePlacementGroups is no error")
	}
	if got := Resolve(nc, found, start).PlacementGroup; !cmp.Equal(got, training) {
		t.Errorf("after a failed call the placement group is %+v, want %+v kept", got, training)
	}
}
