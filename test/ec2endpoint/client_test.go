package ec2endpoint_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
)

// Without NewHTTPClient about one call in ten fails at random this way
// (the first call on a new connection, with a large response).
func TestClientSurvivesFastResponses(t *testing.T) {
	for range 30 {
		f := newFixture(t, profile())
		if _, err := f.client.DescribeInstanceTypes(context.Background(), &ec2.DescribeInstanceTypesInput{}); err != nil {
			t.Fatal(err)
		}
	}
}
