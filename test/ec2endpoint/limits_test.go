package ec2endpoint_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// EC2 takes at most 200 filter values in one describe call, and answers
// more with FilterLimitExceeded.
func TestFilterLimit(t *testing.T) {
	f := newFixture(t, profile())
	ids := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("i-%017x", i)
		}
		return out
	}
	cases := []struct {
		name    string
		filters []ec2types.Filter
		code    string
	}{
		{"200 ids", []ec2types.Filter{{Name: aws.String("instance-id"), Values: ids(200)}}, ""},
		{"201 ids", []ec2types.Filter{{Name: aws.String("instance-id"), Values: ids(201)}}, "FilterLimitExceeded"},
		{"200 values over two filters", []ec2types.Filter{{Name: aws.String("instance-id"), Values: ids(199)}, {Name: aws.String("instance-state-name"), Values: []string{"running"}}}, ""},
		{"201 values over two filters", []ec2types.Filter{{Name: aws.String("instance-id"), Values: ids(200)}, {Name: aws.String("instance-state-name"), Values: []string{"running"}}}, "FilterLimitExceeded"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.client.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{Filters: tc.filters})
			if got := apiCode(t, err); got != tc.code {
				t.Errorf("DescribeInstances: %q (%v), want %q", got, err, tc.code)
			}
			_, err = f.client.DescribeInstanceStatus(context.Background(), &ec2.DescribeInstanceStatusInput{Filters: []ec2types.Filter{{Name: aws.String("availability-zone"), Values: tc.filters[0].Values}}})
			if want := map[bool]string{true: "FilterLimitExceeded", false: ""}[len(tc.filters[0].Values) > 200]; apiCode(t, err) != want {
				t.Errorf("DescribeInstanceStatus: %v, want %q", err, want)
			}
		})
	}
}
