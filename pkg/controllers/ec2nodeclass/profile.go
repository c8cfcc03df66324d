package ec2nodeclass

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
)

// IAM is the part of the IAM API the controller calls for spec.role;
// *iam.Client implements it.
type IAM interface {
	GetInstanceProfile(context.Context, *iam.GetInstanceProfileInput, ...func(*iam.Options)) (*iam.GetInstanceProfileOutput, error)
	CreateInstanceProfile(context.Context, *iam.CreateInstanceProfileInput, ...func(*iam.Options)) (*iam.CreateInstanceProfileOutput, error)
	AddRoleToInstanceProfile(context.Context, *iam.AddRoleToInstanceProfileInput, ...func(*iam.Options)) (*iam.AddRoleToInstanceProfileOutput, error)
	RemoveRoleFromInstanceProfile(context.Context, *iam.RemoveRoleFromInstanceProfileInput, ...func(*iam.Options)) (*iam.RemoveRoleFromInstanceProfileOutput, error)
	DeleteInstanceProfile(context.Context, *iam.DeleteInstanceProfileInput, ...func(*iam.Options)) (*iam.DeleteInstanceProfileOutput, error)
}

var _ IAM = (*iam.Client)(nil)

// errNoIAM is the error for spec.role when the controller was given no
// IAM client.
var errNoIAM = errors.New("the controller has no IAM client")

// EnsureInstanceProfile makes nc's instance profile (InstanceProfileName)
// hold spec.role: it creates the profile when missing, under
// InstanceProfilePath with InstanceProfileTags, removes another role
// from it and adds spec.role. It returns the profile's name.
func EnsureInstanceProfile(ctx context.Context, api IAM, nc *awsv1.EC2NodeClass, clusterName, region string) (string, error) {
	if api == nil {
		return "", errNoIAM
	}
	name := InstanceProfileName(clusterName, region, nc.Name)
	var profile *iamtypes.InstanceProfile
	out, err := api.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: &name})
	switch {
	case isNoSuchEntity(err):
		created, err := api.CreateInstanceProfile(ctx, &iam.CreateInstanceProfileInput{
			InstanceProfileName: &name,
			Path:                new(InstanceProfilePath(region, clusterName, string(nc.UID))),
			Tags:                IAMTags(InstanceProfileTags(nc, clusterName, region)),
		})
		if err != nil {
			return "", fmt.Errorf("creating instance profile %s, %w", name, err)
		}
		profile = created.InstanceProfile
	case err != nil:
		return "", fmt.Errorf("getting instance profile %s, %w", name, err)
	default:
		profile = out.InstanceProfile
	}
	var roles []string
	if profile != nil {
		for _, r := range profile.Roles {
			roles = append(roles, deref(r.RoleName))
		}
	}
	role := RoleName(nc.Spec.Role)
	remove, add := RoleChanges(roles, role)
	for _, r := range remove {
		_, err := api.RemoveRoleFromInstanceProfile(ctx, &iam.RemoveRoleFromInstanceProfileInput{InstanceProfileName: &name, RoleName: &r})
		if err != nil && !isNoSuchEntity(err) {
			return "", fmt.Errorf("removing role %s from instance profile %s, %w", r, name, err)
		}
	}
	if add {
		if _, err := api.AddRoleToInstanceProfile(ctx, &iam.AddRoleToInstanceProfileInput{InstanceProfileName: &name, RoleName: &role}); err != nil {
			return "", fmt.Errorf("adding role %s to instance profile %s, %w", role, name, err)
		}
	}
	return name, nil
}

// DeleteInstanceProfile deletes the instance profile named name, first
// removing its role; a profile that does not exist is no error.
func DeleteInstanceProfile(ctx context.Context, api IAM, name string) error {
	if api == nil {
		return errNoIAM
	}
	out, err := api.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: &name})
	if isNoSuchEntity(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("getting instance profile %s, %w", name, err)
	}
	for _, r := range out.InstanceProfile.Roles {
		_, err := api.RemoveRoleFromInstanceProfile(ctx, &iam.RemoveRoleFromInstanceProfileInput{InstanceProfileName: &name, RoleName: r.RoleName})
		if err != nil && !isNoSuchEntity(err) {
			return fmt.Errorf("removing role %s from instance profile %s, %w", deref(r.RoleName), name, err)
		}
	}
	if _, err := api.DeleteInstanceProfile(ctx, &iam.DeleteInstanceProfileInput{InstanceProfileName: &name}); err != nil && !isNoSuchEntity(err) {
		return fmt.Errorf("deleting instance profile %s, %w", name, err)
	}
	return nil
}
