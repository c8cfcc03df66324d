package ec2nodeclass

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"
	"github.com/aws/smithy-go"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
)

// EC2 is the part of the EC2 API the controller calls; *ec2.Client
// implements it.
type EC2 interface {
	DescribeSubnets(context.Context, *ec2.DescribeSubnetsInput, ...func(*ec2.Options)) (*ec2.DescribeSubnetsOutput, error)
	DescribeSecurityGroups(context.Context, *ec2.DescribeSecurityGroupsInput, ...func(*ec2.Options)) (*ec2.DescribeSecurityGroupsOutput, error)
	DescribeImages(context.Context, *ec2.DescribeImagesInput, ...func(*ec2.Options)) (*ec2.DescribeImagesOutput, error)
	DescribeCapacityReservations(context.Context, *ec2.DescribeCapacityReservationsInput, ...func(*ec2.Options)) (*ec2.DescribeCapacityReservationsOutput, error)
	DescribePlacementGroups(context.Context, *ec2.DescribePlacementGroupsInput, ...func(*ec2.Options)) (*ec2.DescribePlacementGroupsOutput, error)
}

var _ EC2 = (*ec2.Client)(nil)

// SSM is the part of the Systems Manager API the controller calls, to
// read the image ids amiSelectorTerms name by ssmParameter; *ssm.Client
// implements it.
type SSM interface {
	GetParameter(context.Context, *ssm.GetParameterInput, ...func(*ssm.Options)) (*ssm.GetParameterOutput, error)
}

var _ SSM = (*ssm.Client)(nil)

// Gather makes the describe calls nc's selector terms need (the Queries
// of this package, every page of each) and returns what they found. A
// failed kind records its error and the others are still gathered, so
// that one missing permission does not hide the rest of the status.
// kubernetesVersion resolves an alias (see ImageQueries); ssmAPI reads
// the ssmParameter terms' image ids (ssmImageIDs).
func Gather(ctx context.Context, api EC2, ssmAPI SSM, nc *awsv1.EC2NodeClass, kubernetesVersion string) Found {
	var f Found
	// Zone ids come with the subnets (DescribeSubnets always answers
	// AvailabilityZoneId), as the reference takes them: its controller
	// policy allows no DescribeAvailabilityZones.
	f.Subnets, f.SubnetsErr = describeSubnets(ctx, api, SubnetQueries(nc.Spec.SubnetSelectorTerms))
	f.SecurityGroups, f.SecurityGroupsErr = describeSecurityGroups(ctx, api, SecurityGroupQueries(nc.Spec.SecurityGroupSelectorTerms))
	if params, err := ssmImageIDs(ctx, ssmAPI, nc.Spec.AMISelectorTerms); err != nil {
		f.ImagesErr = err
	} else if queries, err := ImageQueries(nc, kubernetesVersion, params); err != nil {
		f.ImagesErr = err
	} else {
		f.Images, f.ImagesErr = describeImages(ctx, api, queries)
	}
	f.CapacityReservations, f.CapacityReservationsErr = describeCapacityReservations(ctx, api, CapacityReservationQueries(nc.Spec.CapacityReservationSelectorTerms))
	if sel := nc.Spec.PlacementGroupSelector; sel != nil {
		f.PlacementGroups, f.PlacementGroupsErr = describePlacementGroups(ctx, api, PlacementGroupQuery(*sel))
	}
	return f
}

// PlacementGroupQuery is the DescribePlacementGroups call for the
// selector: by id or by name, available groups only, as the reference
// asks (providers/placementgroup/types.go).
func PlacementGroupQuery(sel awsv1.PlacementGroupSelector) *ec2.DescribePlacementGroupsInput {
	in := &ec2.DescribePlacementGroupsInput{Filters: []ec2types.Filter{filter("state", string(ec2types.PlacementGroupStateAvailable))}}
	if sel.ID != nil && *sel.ID != "" {
		in.GroupIds = []string{*sel.ID}
	} else if sel.Name != nil {
		in.GroupNames = []string{*sel.Name}
	}
	return in
}

// describePlacementGroups is what EC2 answers; a group id or name it
// does not know (InvalidPlacementGroupId.NotFound,
// InvalidPlacementGroup.Unknown) is no group, not an error.
func describePlacementGroups(ctx context.Context, api EC2, in *ec2.DescribePlacementGroupsInput) ([]ec2types.PlacementGroup, error) {
	out, err := api.DescribePlacementGroups(ctx, in)
	if apiErr, ok := errors.AsType[smithy.APIError](err); ok && apiErr.ErrorCode() == "InvalidPlacementGroup.Unknown" || notFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("describing placement groups, %w", err)
	}
	return out.PlacementGroups, nil
}

func describeSubnets(ctx context.Context, api EC2, queries []*ec2.DescribeSubnetsInput) ([]ec2types.Subnet, error) {
	var out []ec2types.Subnet
	for _, q := range queries {
		pages := ec2.NewDescribeSubnetsPaginator(api, q)
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				return nil, fmt.Errorf("describing subnets, %w", err)
			}
			out = append(out, page.Subnets...)
		}
	}
	return out, nil
}

func describeSecurityGroups(ctx context.Context, api EC2, queries []*ec2.DescribeSecurityGroupsInput) ([]ec2types.SecurityGroup, error) {
	var out []ec2types.SecurityGroup
	for _, q := range queries {
		pages := ec2.NewDescribeSecurityGroupsPaginator(api, q)
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				return nil, fmt.Errorf("describing security groups, %w", err)
			}
			out = append(out, page.SecurityGroups...)
		}
	}
	return out, nil
}

func describeImages(ctx context.Context, api EC2, queries []ImageQuery) ([]FoundImages, error) {
	out := make([]FoundImages, 0, len(queries))
	for _, q := range queries {
		found := FoundImages{Query: q}
		pages := ec2.NewDescribeImagesPaginator(api, q.Input)
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				return nil, fmt.Errorf("describing images, %w", err)
			}
			found.Images = append(found.Images, page.Images...)
		}
		out = append(out, found)
	}
	return out, nil
}

func describeCapacityReservations(ctx context.Context, api EC2, queries []*ec2.DescribeCapacityReservationsInput) ([]ec2types.CapacityReservation, error) {
	var out []ec2types.CapacityReservation
	for _, q := range queries {
		pages := ec2.NewDescribeCapacityReservationsPaginator(api, q)
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if notFound(err) {
				// A term's reservation id that does not exist (or no
				// longer does) selects nothing; EC2 says so with an error,
				// on the only page.
				break
			}
			if err != nil {
				return nil, fmt.Errorf("describing capacity reservations, %w", err)
			}
			out = append(out, page.CapacityReservations...)
		}
	}
	return out, nil
}

// notFound reports whether err is EC2's answer for an id that does not
// exist, such as InvalidCapacityReservationId.NotFound.
func notFound(err error) bool {
	apiErr, ok := errors.AsType[smithy.APIError](err)
	return ok && strings.HasSuffix(apiErr.ErrorCode(), ".NotFound")
}

// ssmImageIDs reads the parameter each ssmParameter term names, as the
// reference does (amifamily/ami.go): the image id it holds, keyed by the
// term's ssmParameter. A parameter that does not exist, or whose value
// is not an image id, selects nothing; any other failure is returned.
// The name may be a parameter's name or ARN, as GetParameter takes it.
func ssmImageIDs(ctx context.Context, api SSM, terms []awsv1.AMISelectorTerm) (map[string]string, error) {
	out := map[string]string{}
	for _, t := range terms {
		if t.SSMParameter == "" {
			continue
		}
		if _, done := out[t.SSMParameter]; done {
			continue
		}
		if api == nil {
			return nil, fmt.Errorf("reading ssm parameter %s, no SSM client", t.SSMParameter)
		}
		got, err := api.GetParameter(ctx, &ssm.GetParameterInput{Name: &t.SSMParameter})
		if _, missing := errors.AsType[*ssmtypes.ParameterNotFound](err); missing {
			out[t.SSMParameter] = ""
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading ssm parameter %s, %w", t.SSMParameter, err)
		}
		id := ""
		if got.Parameter != nil && got.Parameter.Value != nil && strings.HasPrefix(*got.Parameter.Value, "ami-") {
			id = *got.Parameter.Value
		}
		out[t.SSMParameter] = id
	}
	return out, nil
}
