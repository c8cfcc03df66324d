package ec2nodeclass

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	awsprovider "github.com/capstan-dev/capstan/pkg/cloudprovider/aws"
)

// Condition reasons. A True condition's reason is its type.
const (
	ReasonSubnetsNotFound        = "SubnetsNotFound"
	ReasonSecurityGroupsNotFound = "SecurityGroupsNotFound"
	ReasonAMINotFound            = "AMINotFound"
	// ReasonPlacementGroupNotFound is a placementGroupSelector that names
	// no available group.
	ReasonPlacementGroupNotFound   = "PlacementGroupNotFound"
	ReasonUnsupportedAlias         = "UnsupportedAlias"
	ReasonKubernetesVersionUnknown = "KubernetesVersionUnknown"
	ReasonInstanceProfileNotSet    = "InstanceProfileNotSet"
	// ReasonRoleNotFound is a spec.role that IAM does not know.
	ReasonRoleNotFound = "RoleNotFound"
	// ReasonInstanceProfileCreationFailed is an IAM call for spec.role's
	// instance profile that failed otherwise (AccessDenied, ...).
	ReasonInstanceProfileCreationFailed = "InstanceProfileCreationFailed"
	// ReasonInvalidSpotMaxPrice is a spot max price annotation EC2 would
	// not take (docs/aws.md, "Spot max price").
	ReasonInvalidSpotMaxPrice = "InvalidSpotMaxPrice"
	// ReasonClusterResolutionFailed is a class whose AMI family's user
	// data needs what the cluster's discovery cannot tell (the
	// reference's ClusterCIDRResolutionFailed, for the endpoint and CA
	// too).
	ReasonClusterResolutionFailed = "ClusterResolutionFailed"
	// ReasonDescribeFailed is an EC2 call that failed before the part's
	// condition was ever resolved for the current spec.
	ReasonDescribeFailed = "DescribeFailed"
)

// Found is what the describe calls for one EC2NodeClass returned (Gather
// makes them). A kind whose calls failed has its error set; its other
// field is then meaningless.
type Found struct {
	Subnets        []ec2types.Subnet
	SecurityGroups []ec2types.SecurityGroup
	// Images are the results of ImageQueries, one entry per query.
	Images               []FoundImages
	CapacityReservations []ec2types.CapacityReservation

	SubnetsErr        error
	SecurityGroupsErr error
	// ImagesErr is an *AliasError when the alias cannot be resolved at
	// all, else a describe failure.
	ImagesErr               error
	CapacityReservationsErr error
	// PlacementGroups are what the placementGroupSelector's call found;
	// not asked without a selector.
	PlacementGroups    []ec2types.PlacementGroup
	PlacementGroupsErr error

	// InstanceProfile is the instance profile made for spec.role, with
	// the role in it; the controller makes it (EnsureInstanceProfile).
	// Empty with spec.instanceProfile.
	InstanceProfile    string
	InstanceProfileErr error

	// Bootstrap is what nodes join as far as it is known, BootstrapErr
	// why the rest is not (ClusterDiscovery.Bootstrap).
	Bootstrap    awsprovider.Bootstrap
	BootstrapErr error
}

// FoundImages are the images one ImageQuery returned.
type FoundImages struct {
	Query  ImageQuery
	Images []ec2types.Image
}

// Err joins the describe and IAM failures in f (an unresolvable alias
// or a role that does not exist is not one: retrying at once does not
// help), nil when there are none.
func (f Found) Err() error {
	imagesErr := f.ImagesErr
	if _, ok := errors.AsType[*AliasError](imagesErr); ok {
		imagesErr = nil
	}
	profileErr := f.InstanceProfileErr
	if IsRoleNotFound(profileErr) {
		profileErr = nil
	}
	return errors.Join(f.SubnetsErr, f.SecurityGroupsErr, imagesErr, f.CapacityReservationsErr, f.PlacementGroupsErr, profileErr)
}

// Resolve computes nc's status at now from what EC2 returned: the
// selected subnets, security groups, images and active capacity
// reservations, the instance profile, and every condition, each with
// nc's generation as ObservedGeneration and keeping its
// LastTransitionTime when its status did not change. Conditions of other
// types are left as they are.
//
// A kind whose describe calls failed keeps the list and condition it had
// when those were resolved for nc's current generation: an EC2 hiccup
// must not take a ready class down. Otherwise its list empties and its
// condition is Unknown (ReasonDescribeFailed) with the error.
//
// Ready is True when every other condition is; else False (Unknown when
// none is False) with the first failing condition's reason and all their
// messages. Resolve reads no clock and mutates none of its inputs.
func Resolve(nc *awsv1.EC2NodeClass, found Found, now time.Time) awsv1.EC2NodeClassStatus {
	status := *nc.Status.DeepCopy()
	spec := nc.Spec
	var conditions []metav1.Condition

	if err := found.SubnetsErr; err != nil {
		c, keep := kept(nc, awsv1.ConditionTypeSubnetsReady, "describing subnets", err)
		if !keep {
			status.Subnets = nil
		}
		conditions = append(conditions, c)
	} else {
		var c metav1.Condition
		status.Subnets, c = resolveSubnets(spec.SubnetSelectorTerms, found.Subnets)
		conditions = append(conditions, c)
	}

	if err := found.SecurityGroupsErr; err != nil {
		c, keep := kept(nc, awsv1.ConditionTypeSecurityGroupsReady, "describing security groups", err)
		if !keep {
			status.SecurityGroups = nil
		}
		conditions = append(conditions, c)
	} else {
		var c metav1.Condition
		status.SecurityGroups, c = resolveSecurityGroups(spec.SecurityGroupSelectorTerms, found.SecurityGroups)
		conditions = append(conditions, c)
	}

	aliasErr, isAliasErr := errors.AsType[*AliasError](found.ImagesErr)
	switch {
	case isAliasErr:
		status.AMIs = nil
		conditions = append(conditions, falseCondition(awsv1.ConditionTypeAMIsReady, aliasErr.Reason, aliasErr.Message))
	case found.ImagesErr != nil:
		c, keep := kept(nc, awsv1.ConditionTypeAMIsReady, "describing images", found.ImagesErr)
		if !keep {
			status.AMIs = nil
		}
		conditions = append(conditions, c)
	default:
		var c metav1.Condition
		status.AMIs, c = resolveAMIs(spec.AMISelectorTerms, found.Images, now)
		conditions = append(conditions, c)
	}

	var profile metav1.Condition
	status.InstanceProfile, profile = resolveInstanceProfile(nc, found)
	conditions = append(conditions, profile)

	if err := found.CapacityReservationsErr; err != nil {
		c, keep := kept(nc, awsv1.ConditionTypeCapacityReservationsReady, "describing capacity reservations", err)
		if !keep {
			status.CapacityReservations = nil
		}
		conditions = append(conditions, c)
	} else {
		var c metav1.Condition
		status.CapacityReservations, c = resolveCapacityReservations(spec.CapacityReservationSelectorTerms, found.CapacityReservations, now)
		conditions = append(conditions, c)
	}

	conditions = append(conditions, validation(nc, found))

	var placement metav1.Condition
	if err := found.PlacementGroupsErr; err != nil {
		var keep bool
		placement, keep = kept(nc, awsv1.ConditionTypePlacementGroupReady, "describing placement groups", err)
		if !keep {
			status.PlacementGroup = nil
		}
	} else {
		status.PlacementGroup, placement = resolvePlacementGroup(spec.PlacementGroupSelector, found.PlacementGroups)
	}
	// Listed after Ready, which sums it up with the others: the
	// conditions of classes resolved before it keep their order.
	conditions = append(conditions, ready(append(conditions, placement)), placement)
	for _, c := range conditions {
		c.ObservedGeneration = nc.Generation
		c.LastTransitionTime = metav1.NewTime(now)
		meta.SetStatusCondition(&status.Conditions, c)
	}
	return status
}

// resolvePlacementGroup is the group the selector names, as EC2
// describes it, and PlacementGroupReady: True without a selector, False
// (ReasonPlacementGroupNotFound) when no available group has that name or
// id, as the reference's placement group reconciler decides.
func resolvePlacementGroup(sel *awsv1.PlacementGroupSelector, found []ec2types.PlacementGroup) (*awsv1.PlacementGroup, metav1.Condition) {
	if sel == nil {
		return nil, trueCondition(awsv1.ConditionTypePlacementGroupReady, "")
	}
	if len(found) == 0 {
		return nil, falseCondition(awsv1.ConditionTypePlacementGroupReady, ReasonPlacementGroupNotFound,
			"no available placement group matches placementGroupSelector "+termsText(sel))
	}
	g := found[0]
	return &awsv1.PlacementGroup{ID: deref(g.GroupId), Name: deref(g.GroupName), Strategy: string(g.Strategy),
		PartitionCount: deref(g.PartitionCount), SpreadLevel: string(g.SpreadLevel)}, trueCondition(awsv1.ConditionTypePlacementGroupReady, "")
}

// kept is the condition of type typ after its describe call failed with
// err, and whether the kind keeps its previous list (see Resolve).
func kept(nc *awsv1.EC2NodeClass, typ, call string, err error) (metav1.Condition, bool) {
	if prev := meta.FindStatusCondition(nc.Status.Conditions, typ); prev != nil && prev.ObservedGeneration == nc.Generation {
		return *prev, true
	}
	return metav1.Condition{Type: typ, Status: metav1.ConditionUnknown, Reason: ReasonDescribeFailed,
		Message: fmt.Sprintf("%s failed, retrying: %v", call, err)}, false
}

func resolveSubnets(terms []awsv1.SubnetSelectorTerm, found []ec2types.Subnet) ([]awsv1.Subnet, metav1.Condition) {
	if len(terms) == 0 {
		return nil, falseCondition(awsv1.ConditionTypeSubnetsReady, ReasonSubnetsNotFound, "spec.subnetSelectorTerms is empty")
	}
	// Most free addresses first, as the reference orders them: the
	// provider launches into the first subnet of a zone.
	found = slices.Clone(found)
	slices.SortStableFunc(found, func(a, b ec2types.Subnet) int {
		return cmp.Or(cmp.Compare(deref(b.AvailableIpAddressCount), deref(a.AvailableIpAddressCount)), cmp.Compare(deref(a.SubnetId), deref(b.SubnetId)))
	})
	var out []awsv1.Subnet
	seen := map[string]bool{}
	for _, s := range found {
		id := deref(s.SubnetId)
		if id == "" || seen[id] {
			continue
		}
		seen[id] = true
		out = append(out, awsv1.Subnet{ID: id, Zone: deref(s.AvailabilityZone), ZoneID: deref(s.AvailabilityZoneId)})
	}
	if len(out) == 0 {
		return nil, falseCondition(awsv1.ConditionTypeSubnetsReady, ReasonSubnetsNotFound, "no subnet matches subnetSelectorTerms "+termsText(terms))
	}
	return out, trueCondition(awsv1.ConditionTypeSubnetsReady, "")
}

func resolveSecurityGroups(terms []awsv1.SecurityGroupSelectorTerm, found []ec2types.SecurityGroup) ([]awsv1.SecurityGroup, metav1.Condition) {
	if len(terms) == 0 {
		return nil, falseCondition(awsv1.ConditionTypeSecurityGroupsReady, ReasonSecurityGroupsNotFound, "spec.securityGroupSelectorTerms is empty")
	}
	var out []awsv1.SecurityGroup
	seen := map[string]bool{}
	for _, g := range found {
		id := deref(g.GroupId)
		if id == "" || seen[id] {
			continue
		}
		seen[id] = true
		out = append(out, awsv1.SecurityGroup{ID: id, Name: deref(g.GroupName)})
	}
	if len(out) == 0 {
		return nil, falseCondition(awsv1.ConditionTypeSecurityGroupsReady, ReasonSecurityGroupsNotFound, "no security group matches securityGroupSelectorTerms "+termsText(terms))
	}
	slices.SortFunc(out, func(a, b awsv1.SecurityGroup) int { return cmp.Compare(a.ID, b.ID) })
	return out, trueCondition(awsv1.ConditionTypeSecurityGroupsReady, "")
}

// validation is ValidationSucceeded: False for a spot max price
// annotation EC2 would refuse, or when the user data of the class's AMI
// family needs what the cluster's discovery cannot tell.
func validation(nc *awsv1.EC2NodeClass, found Found) metav1.Condition {
	if _, _, _, err := nc.SpotMaxPrice(); err != nil {
		return falseCondition(awsv1.ConditionTypeValidationSucceeded, ReasonInvalidSpotMaxPrice, err.Error())
	}
	if missing := found.Bootstrap.Missing(nc.AMIFamily()); len(missing) > 0 {
		msg := fmt.Sprintf("%s user data needs the cluster's %s, which could not be discovered; set the flags or allow eks:DescribeCluster on the cluster", nc.AMIFamily(), strings.Join(missing, ", "))
		if found.BootstrapErr != nil {
			msg += ": " + found.BootstrapErr.Error()
		}
		return falseCondition(awsv1.ConditionTypeValidationSucceeded, ReasonClusterResolutionFailed, msg)
	}
	return trueCondition(awsv1.ConditionTypeValidationSucceeded, "")
}

// ready sums up the other conditions.
func ready(conditions []metav1.Condition) metav1.Condition {
	var failing []metav1.Condition
	anyFalse := false
	for _, c := range conditions {
		if c.Status != metav1.ConditionTrue {
			failing = append(failing, c)
			anyFalse = anyFalse || c.Status == metav1.ConditionFalse
		}
	}
	if len(failing) == 0 {
		return trueCondition(awsv1.ConditionTypeReady, "")
	}
	// The reason is a False condition's, so that an event names what is
	// wrong rather than what is still being looked up.
	status, reason := metav1.ConditionUnknown, failing[0].Reason
	if anyFalse {
		status = metav1.ConditionFalse
		reason = failing[slices.IndexFunc(failing, func(c metav1.Condition) bool { return c.Status == metav1.ConditionFalse })].Reason
	}
	messages := make([]string, 0, len(failing))
	for _, c := range failing {
		messages = append(messages, fmt.Sprintf("%s=%s: %s", c.Type, c.Status, c.Message))
	}
	return metav1.Condition{Type: awsv1.ConditionTypeReady, Status: status, Reason: reason, Message: strings.Join(messages, "; ")}
}

func trueCondition(typ, message string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: typ, Message: message}
}

func falseCondition(typ, reason, message string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: metav1.ConditionFalse, Reason: reason, Message: message}
}

// termsText writes selector terms as a person wrote them in the
// manifest, in JSON.
func termsText(terms any) string {
	b, err := json.Marshal(terms)
	if err != nil {
		// Selector terms are strings and maps of strings: they always
		// marshal.
		return fmt.Sprint(terms)
	}
	return string(b)
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
