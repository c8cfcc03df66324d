package ec2endpoint_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	"github.com/google/go-cmp/cmp"

	"github.com/capstan-dev/capstan/test/ec2endpoint"
)

func iamClient(f *fixture) *iam.Client {
	return iam.New(iam.Options{
		Region: "us-west-2", BaseEndpoint: aws.String(f.url),
		Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", ""), RetryMaxAttempts: 1,
		HTTPClient: ec2endpoint.NewHTTPClient(),
	})
}

// httpStatus is the HTTP status an SDK call failed with.
func httpStatus(err error) int {
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

// The instance profile's life through the real SDK, on the same
// listener as EC2: created with path and tags, a role added, swapped,
// removed, the profile deleted; IAM's errors with their codes and
// statuses.
func TestInstanceProfileLifecycle(t *testing.T) {
	f := newFixture(t, profile())
	api := iamClient(f)
	ctx := context.Background()
	name := aws.String("test-cluster_123")

	_, err := api.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: name})
	var noSuch *iamtypes.NoSuchEntityException
	if !errors.As(err, &noSuch) || httpStatus(err) != http.StatusNotFound {
		t.Fatalf("GetInstanceProfile of a missing profile: want NoSuchEntity 404, got %v", err)
	}

	created, err := api.CreateInstanceProfile(ctx, &iam.CreateInstanceProfileInput{InstanceProfileName: name,
		Path: aws.String("/karpenter/us-west-2/test-cluster/uid/"),
		Tags: []iamtypes.Tag{{Key: aws.String("kubernetes.io/cluster/test-cluster"), Value: aws.String("owned")}, {Key: aws.String("karpenter.k8s.aws/ec2nodeclass"), Value: aws.String("default")}}})
	if err != nil {
		t.Fatal(err)
	}
	p := created.InstanceProfile
	if got, want := aws.ToString(p.Arn), "arn:aws:iam::111122223333:instance-profile/karpenter/us-west-2/test-cluster/uid/test-cluster_123"; got != want {
		t.Errorf("Arn = %s, want %s", got, want)
	}
	if aws.ToString(p.InstanceProfileId) == "" || p.CreateDate == nil || len(p.Roles) != 0 {
		t.Errorf("created profile %+v", p)
	}
	_, err = api.CreateInstanceProfile(ctx, &iam.CreateInstanceProfileInput{InstanceProfileName: name})
	var exists *iamtypes.EntityAlreadyExistsException
	if !errors.As(err, &exists) || httpStatus(err) != http.StatusConflict {
		t.Fatalf("creating it again: want EntityAlreadyExists 409, got %v", err)
	}

	// An unknown role is NoSuchEntity naming the role.
	_, err = api.AddRoleToInstanceProfile(ctx, &iam.AddRoleToInstanceProfileInput{InstanceProfileName: name, RoleName: aws.String("typo")})
	if !errors.As(err, &noSuch) || noSuch.ErrorMessage() != "The role with name typo cannot be found." {
		t.Fatalf("adding an unknown role: want NoSuchEntity, got %v", err)
	}
	if _, err := api.AddRoleToInstanceProfile(ctx, &iam.AddRoleToInstanceProfileInput{InstanceProfileName: name, RoleName: aws.String("KarpenterNodeRole-test-cluster")}); err != nil {
		t.Fatal(err)
	}
	_, err = api.AddRoleToInstanceProfile(ctx, &iam.AddRoleToInstanceProfileInput{InstanceProfileName: name, RoleName: aws.String("capstan-node-role")})
	var limit *iamtypes.LimitExceededException
	if !errors.As(err, &limit) {
		t.Fatalf("a second role: want LimitExceeded, got %v", err)
	}
	got, err := api.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: name})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.InstanceProfile.Roles) != 1 || aws.ToString(got.InstanceProfile.Roles[0].RoleName) != "KarpenterNodeRole-test-cluster" ||
		aws.ToString(got.InstanceProfile.Roles[0].Arn) != "arn:aws:iam::111122223333:role/KarpenterNodeRole-test-cluster" {
		t.Errorf("roles = %+v", got.InstanceProfile.Roles)
	}
	if _, err := api.TagInstanceProfile(ctx, &iam.TagInstanceProfileInput{InstanceProfileName: name, Tags: []iamtypes.Tag{{Key: aws.String("team"), Value: aws.String("ml")}}}); err != nil {
		t.Fatal(err)
	}

	// Deleting a profile that holds a role is refused.
	_, err = api.DeleteInstanceProfile(ctx, &iam.DeleteInstanceProfileInput{InstanceProfileName: name})
	var conflict *iamtypes.DeleteConflictException
	if !errors.As(err, &conflict) {
		t.Fatalf("deleting a profile with a role: want DeleteConflict, got %v", err)
	}
	if _, err := api.RemoveRoleFromInstanceProfile(ctx, &iam.RemoveRoleFromInstanceProfileInput{InstanceProfileName: name, RoleName: aws.String("KarpenterNodeRole-test-cluster")}); err != nil {
		t.Fatal(err)
	}
	if _, err := api.AddRoleToInstanceProfile(ctx, &iam.AddRoleToInstanceProfileInput{InstanceProfileName: name, RoleName: aws.String("capstan-node-role")}); err != nil {
		t.Fatal(err)
	}
	want := []ec2endpoint.InstanceProfile{{Name: "test-cluster_123", Path: "/karpenter/us-west-2/test-cluster/uid/",
		Roles: []string{"capstan-node-role"}, Tags: map[string]string{"kubernetes.io/cluster/test-cluster": "owned", "karpenter.k8s.aws/ec2nodeclass": "default", "team": "ml"}}}
	if diff := cmp.Diff(want, f.server.InstanceProfiles(), cmp.FilterPath(func(p cmp.Path) bool {
		switch p.Last().String() {
		case ".ID", ".ARN", ".Created":
			return true
		}
		return false
	}, cmp.Ignore())); diff != "" {
		t.Errorf("InstanceProfiles (-want +got):\n%s", diff)
	}

	if _, err := api.RemoveRoleFromInstanceProfile(ctx, &iam.RemoveRoleFromInstanceProfileInput{InstanceProfileName: name, RoleName: aws.String("capstan-node-role")}); err != nil {
		t.Fatal(err)
	}
	_, err = api.RemoveRoleFromInstanceProfile(ctx, &iam.RemoveRoleFromInstanceProfileInput{InstanceProfileName: name, RoleName: aws.String("capstan-node-role")})
	if !errors.As(err, &noSuch) {
		t.Fatalf("removing a role not in the profile: want NoSuchEntity, got %v", err)
	}
	if _, err := api.DeleteInstanceProfile(ctx, &iam.DeleteInstanceProfileInput{InstanceProfileName: name}); err != nil {
		t.Fatal(err)
	}
	if _, err := api.DeleteInstanceProfile(ctx, &iam.DeleteInstanceProfileInput{InstanceProfileName: name}); !errors.As(err, &noSuch) {
		t.Fatalf("deleting it again: want NoSuchEntity, got %v", err)
	}
	if got := f.server.InstanceProfiles(); len(got) != 0 {
		t.Errorf("profiles left: %+v", got)
	}

	role, err := api.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String("capstan-node-role")})
	if err != nil || aws.ToString(role.Role.RoleName) != "capstan-node-role" {
		t.Fatalf("GetRole = %+v, %v", role, err)
	}
	_, err = api.CreateInstanceProfile(ctx, &iam.CreateInstanceProfileInput{InstanceProfileName: aws.String("bad name")})
	if apiCode(t, err) != "ValidationError" || httpStatus(err) != http.StatusBadRequest {
		t.Fatalf("a bad name: want ValidationError 400, got %v", err)
	}
	_, err = api.ListRoles(ctx, &iam.ListRolesInput{})
	if apiCode(t, err) != "InvalidAction" {
		t.Fatalf("an action not served: want InvalidAction, got %v", err)
	}
}
