package ec2nodeclass

import (
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
)

// maxResults is the page size of the paginated describe calls: EC2's
// largest for every one of them.
const maxResults = 1000

// SubnetQueries are the DescribeSubnets calls whose results, together,
// are the subnets terms select: terms are ORed, so each term that has
// tags is its own call (its fields ANDed as filters) and the terms that
// name only an id share one subnet-id call.
func SubnetQueries(terms []awsv1.SubnetSelectorTerm) []*ec2.DescribeSubnetsInput {
	var out []*ec2.DescribeSubnetsInput
	var ids []string
	for _, t := range terms {
		if len(t.Tags) == 0 {
			if t.ID != "" {
				ids = append(ids, t.ID)
			}
			continue
		}
		filters := tagFilters(t.Tags)
		if t.ID != "" {
			filters = append(filters, filter("subnet-id", t.ID))
		}
		out = append(out, &ec2.DescribeSubnetsInput{Filters: filters, MaxResults: aws.Int32(maxResults)})
	}
	if len(ids) > 0 {
		out = append(out, &ec2.DescribeSubnetsInput{Filters: []ec2types.Filter{filter("subnet-id", ids...)}, MaxResults: aws.Int32(maxResults)})
	}
	return out
}

// SecurityGroupQueries are the DescribeSecurityGroups calls for terms, as
// SubnetQueries: terms naming only an id share one group-id call, terms
// naming only a name (the GroupName, not the Name tag) one group-name
// call, and every other term is its own call.
func SecurityGroupQueries(terms []awsv1.SecurityGroupSelectorTerm) []*ec2.DescribeSecurityGroupsInput {
	var out []*ec2.DescribeSecurityGroupsInput
	var ids, names []string
	for _, t := range terms {
		switch {
		case len(t.Tags) == 0 && t.Name == "" && t.ID != "":
			ids = append(ids, t.ID)
		case len(t.Tags) == 0 && t.ID == "" && t.Name != "":
			names = append(names, t.Name)
		case len(t.Tags) > 0 || t.ID != "" || t.Name != "":
			filters := tagFilters(t.Tags)
			if t.ID != "" {
				filters = append(filters, filter("group-id", t.ID))
			}
			if t.Name != "" {
				filters = append(filters, filter("group-name", t.Name))
			}
			out = append(out, &ec2.DescribeSecurityGroupsInput{Filters: filters, MaxResults: aws.Int32(maxResults)})
		}
	}
	if len(ids) > 0 {
		out = append(out, &ec2.DescribeSecurityGroupsInput{Filters: []ec2types.Filter{filter("group-id", ids...)}, MaxResults: aws.Int32(maxResults)})
	}
	if len(names) > 0 {
		out = append(out, &ec2.DescribeSecurityGroupsInput{Filters: []ec2types.Filter{filter("group-name", names...)}, MaxResults: aws.Int32(maxResults)})
	}
	return out
}

// ImageQuery is one DescribeImages call and the requirements its images
// carry besides their architecture. Variants holds one requirement set
// per status entry an image becomes: empty for a selector term (one
// entry, the architecture alone), one or more for an alias, where one
// image may serve, say, both Nvidia and Neuron instance types.
type ImageQuery struct {
	Input    *ec2.DescribeImagesInput
	Variants [][]corev1.NodeSelectorRequirement
}

// ImageQueries are the DescribeImages calls for nc's amiSelectorTerms:
// an alias's calls (aliasQueries), or one call per term that is not only
// an id and one image-id call for the id terms and the ssmParameter
// terms, whose image ids ssmIDs holds (ssmImageIDs; a term without one
// selects nothing, and its other fields are not read, as in the
// reference). The error is an *AliasError.
func ImageQueries(nc *awsv1.EC2NodeClass, kubernetesVersion string, ssmIDs map[string]string) ([]ImageQuery, error) {
	// Validation makes an alias the only term.
	if alias := nc.Alias(); alias != nil {
		return aliasQueries(*alias, kubernetesVersion)
	}
	var out []ImageQuery
	var ids []string
	for _, t := range nc.Spec.AMISelectorTerms {
		switch {
		case t.SSMParameter != "":
			if id := ssmIDs[t.SSMParameter]; id != "" {
				ids = append(ids, id)
			}
		case t.ID != "" && t.Name == "" && t.Owner == "" && len(t.Tags) == 0:
			ids = append(ids, t.ID)
		case t.ID != "" || t.Name != "" || len(t.Tags) > 0:
			out = append(out, ImageQuery{Input: termImageInput(t)})
		}
	}
	if len(ids) > 0 {
		out = append(out, ImageQuery{Input: imagesInput([]ec2types.Filter{filter("image-id", ids...)}, nil)})
	}
	return out, nil
}

// termImageInput is the DescribeImages input of one selector term with
// a name, tags or an owner. Owners default to self and amazon only for a
// name, as the reference's: tags are private to an account, so a tags
// term never matches a stranger's image.
func termImageInput(t awsv1.AMISelectorTerm) *ec2.DescribeImagesInput {
	filters := tagFilters(t.Tags)
	if t.ID != "" {
		filters = append(filters, filter("image-id", t.ID))
	}
	if t.Name != "" {
		filters = append(filters, filter("name", t.Name))
	}
	var owners []string
	for o := range strings.SplitSeq(t.Owner, ",") {
		if o = strings.TrimSpace(o); o != "" {
			owners = append(owners, o)
		}
	}
	if len(owners) == 0 && t.Name != "" {
		// A name filter alone would also match images anyone has made
		// public under a look-alike name.
		owners = []string{"self", "amazon"}
	}
	return imagesInput(filters, owners)
}

// imagesInput asks for available images only, deprecated ones included
// so that Resolve can fall back to them when nothing else matches.
func imagesInput(filters []ec2types.Filter, owners []string) *ec2.DescribeImagesInput {
	return &ec2.DescribeImagesInput{
		Filters:           append(filters, filter("state", string(ec2types.ImageStateAvailable))),
		Owners:            owners,
		IncludeDeprecated: aws.Bool(true),
		MaxResults:        aws.Int32(maxResults),
	}
}

// CapacityReservationQueries are the DescribeCapacityReservations calls
// for terms, for active reservations only: one call per id (EC2 fails
// the whole call when one of several ids does not exist), and one per
// term of tags and instance match criteria, narrowed by its ownerID. An
// ownerID alone selects nothing, as in the reference.
func CapacityReservationQueries(terms []awsv1.CapacityReservationSelectorTerm) []*ec2.DescribeCapacityReservationsInput {
	var out []*ec2.DescribeCapacityReservationsInput
	active := filter("state", string(ec2types.CapacityReservationStateActive))
	for _, t := range terms {
		if t.ID != "" {
			// EC2 refuses MaxResults next to reservation ids.
			out = append(out, &ec2.DescribeCapacityReservationsInput{CapacityReservationIds: []string{t.ID}, Filters: []ec2types.Filter{active}})
			continue
		}
		if len(t.Tags) == 0 && t.InstanceMatchCriteria == "" {
			continue
		}
		filters := append(tagFilters(t.Tags), active)
		if t.OwnerID != "" {
			filters = append(filters, filter("owner-id", t.OwnerID))
		}
		if t.InstanceMatchCriteria != "" {
			filters = append(filters, filter("instance-match-criteria", string(t.InstanceMatchCriteria)))
		}
		out = append(out, &ec2.DescribeCapacityReservationsInput{Filters: filters, MaxResults: aws.Int32(maxResults)})
	}
	return out
}

// tagFilters are EC2 filters for a term's tags, in key order: tag:KEY
// for a value, tag-key for "*" (the key with any value).
func tagFilters(tags map[string]string) []ec2types.Filter {
	var out []ec2types.Filter
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		if v := tags[k]; v == "*" {
			out = append(out, filter("tag-key", k))
		} else {
			out = append(out, filter("tag:"+k, v))
		}
	}
	return out
}

func filter(name string, values ...string) ec2types.Filter {
	return ec2types.Filter{Name: aws.String(name), Values: values}
}
