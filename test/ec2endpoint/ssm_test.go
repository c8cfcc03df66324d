package ec2endpoint_test

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"

	"github.com/capstan-dev/capstan/test/ec2endpoint"
)

// GetParameter through the SDK's SSM client: by name or ARN, and SSM's
// ParameterNotFound for a name the account lacks.
func TestGetParameter(t *testing.T) {
	f := newFixture(t, profile(), func(o *ec2endpoint.Options) {
		o.Parameters = map[string]string{"/my/ami": "ami-0123", "/aws/service/eks/optimized-ami/1.30/amazon-linux-2023/x86_64/standard/recommended/image_id": "ami-0456"}
	})
	client := ssm.New(ssm.Options{Region: "us-west-2", BaseEndpoint: aws.String(f.url), RetryMaxAttempts: 1, HTTPClient: ec2endpoint.NewHTTPClient(),
		Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", "")})
	ctx := context.Background()
	for name, want := range map[string]string{
		"/my/ami": "ami-0123",
		"arn:aws:ssm:us-west-2:123456789012:parameter/my/ami":                                        "ami-0123",
		"/aws/service/eks/optimized-ami/1.30/amazon-linux-2023/x86_64/standard/recommended/image_id": "ami-0456",
	} {
		out, err := client.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String(name)})
		if err != nil {
			t.Fatalf("GetParameter %s: %v", name, err)
		}
		if got := aws.ToString(out.Parameter.Value); got != want {
			t.Errorf("GetParameter %s = %s, want %s", name, got, want)
		}
	}
	_, err := client.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String("/missing")})
	if _, ok := errors.AsType[*ssmtypes.ParameterNotFound](err); !ok {
		t.Errorf("GetParameter /missing: %v, want ParameterNotFound", err)
	}
}
