package ec2endpoint_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/google/go-cmp/cmp"

	"github.com/capstan-dev/capstan/test/ec2endpoint"
)

func TestDescribePlacementGroups(t *testing.T) {
	f := newFixture(t, profile(), func(o *ec2endpoint.Options) {
		o.PlacementGroups = []ec2endpoint.PlacementGroup{
			{ID: "pg-1", Name: "training", Strategy: "cluster"},
			{ID: "pg-2", Name: "racks", Strategy: "partition", PartitionCount: 3},
			{ID: "pg-3", Name: "going", Strategy: "spread", SpreadLevel: "rack", State: "deleting"},
		}
	})
	ctx := context.Background()
	available := []ec2types.Filter{{Name: aws.String("state"), Values: []string{"available"}}}
	for _, tc := range []struct {
		name string
		in   *ec2.DescribePlacementGroupsInput
		want []string
		code string
	}{
		{"all", &ec2.DescribePlacementGroupsInput{}, []string{"pg-1 training cluster available", "pg-2 racks partition available", "pg-3 going spread deleting"}, ""},
		{"by name, available", &ec2.DescribePlacementGroupsInput{GroupNames: []string{"training"}, Filters: available}, []string{"pg-1 training cluster available"}, ""},
		{"by id", &ec2.DescribePlacementGroupsInput{GroupIds: []string{"pg-2"}}, []string{"pg-2 racks partition available"}, ""},
		{"deleting filtered out", &ec2.DescribePlacementGroupsInput{GroupNames: []string{"going"}, Filters: available}, nil, ""},
		{"unknown name", &ec2.DescribePlacementGroupsInput{GroupNames: []string{"nope"}}, nil, "InvalidPlacementGroup.Unknown"},
		{"unknown id", &ec2.DescribePlacementGroupsInput{GroupIds: []string{"pg-404"}}, nil, "InvalidPlacementGroupId.NotFound"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := f.client.DescribePlacementGroups(ctx, tc.in)
			if code := apiCode(t, err); code != tc.code {
				t.Fatalf("error code %q, want %q (%v)", code, tc.code, err)
			}
			if err != nil {
				return
			}
			var got []string
			for _, g := range out.PlacementGroups {
				got = append(got, aws.ToString(g.GroupId)+" "+aws.ToString(g.GroupName)+" "+string(g.Strategy)+" "+string(g.State))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("groups (-want +got):\n%s", diff)
			}
		})
	}
}
