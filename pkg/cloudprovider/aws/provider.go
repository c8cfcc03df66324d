package aws

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"golang.org/x/sync/singleflight"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
)

// Name is the provider's name, the --cloud-provider value.
const Name = "aws"

// NodeClassKind is the kind a NodePool's nodeClassRef names for AWS.
const NodeClassKind = "EC2NodeClass"

// EC2 is the part of the EC2 API the provider calls; *ec2.Client
// implements it.
type EC2 interface {
	DescribeInstanceTypes(ctx context.Context, in *ec2.DescribeInstanceTypesInput, opts ...func(*ec2.Options)) (*ec2.DescribeInstanceTypesOutput, error)
	DescribeInstanceTypeOfferings(ctx context.Context, in *ec2.DescribeInstanceTypeOfferingsInput, opts ...func(*ec2.Options)) (*ec2.DescribeInstanceTypeOfferingsOutput, error)
	DescribeSpotPriceHistory(ctx context.Context, in *ec2.DescribeSpotPriceHistoryInput, opts ...func(*ec2.Options)) (*ec2.DescribeSpotPriceHistoryOutput, error)
	DescribeSubnets(ctx context.Context, in *ec2.DescribeSubnetsInput, opts ...func(*ec2.Options)) (*ec2.DescribeSubnetsOutput, error)
	DescribeCapacityReservations(ctx context.Context, in *ec2.DescribeCapacityReservationsInput, opts ...func(*ec2.Options)) (*ec2.DescribeCapacityReservationsOutput, error)
	DescribeInstances(ctx context.Context, in *ec2.DescribeInstancesInput, opts ...func(*ec2.Options)) (*ec2.DescribeInstancesOutput, error)
	DescribeInstanceStatus(ctx context.Context, in *ec2.DescribeInstanceStatusInput, opts ...func(*ec2.Options)) (*ec2.DescribeInstanceStatusOutput, error)
	CreateFleet(ctx context.Context, in *ec2.CreateFleetInput, opts ...func(*ec2.Options)) (*ec2.CreateFleetOutput, error)
	CreateTags(ctx context.Context, in *ec2.CreateTagsInput, opts ...func(*ec2.Options)) (*ec2.CreateTagsOutput, error)
	TerminateInstances(ctx context.Context, in *ec2.TerminateInstancesInput, opts ...func(*ec2.Options)) (*ec2.TerminateInstancesOutput, error)
	CreateLaunchTemplate(ctx context.Context, in *ec2.CreateLaunchTemplateInput, opts ...func(*ec2.Options)) (*ec2.CreateLaunchTemplateOutput, error)
	DescribeLaunchTemplates(ctx context.Context, in *ec2.DescribeLaunchTemplatesInput, opts ...func(*ec2.Options)) (*ec2.DescribeLaunchTemplatesOutput, error)
	DeleteLaunchTemplate(ctx context.Context, in *ec2.DeleteLaunchTemplateInput, opts ...func(*ec2.Options)) (*ec2.DeleteLaunchTemplateOutput, error)
}

// Cluster answers what nodes join, as far as it is known, and why the
// rest is not.
type Cluster interface {
	Bootstrap(ctx context.Context) (Bootstrap, error)
}

// NodeClasses looks up EC2NodeClasses: the controller reads them through
// its cached client (ClientNodeClasses).
type NodeClasses interface {
	EC2NodeClass(ctx context.Context, name string) (*awsv1.EC2NodeClass, error)
}

// Options configure the provider.
type Options struct {
	Region      string
	ClusterName string
	Clock       clock.Clock
	NodeClasses NodeClasses
	// Unavailable is the provisioner's unavailable-offerings cache,
	// applied to the offerings GetInstanceTypes returns.
	Unavailable *cloudprovider.UnavailableOfferings
	// VMMemoryOverheadPercent is the share of an instance's memory the
	// hypervisor and firmware keep, subtracted before the node's own
	// overhead (the reference's --vm-memory-overhead-percent).
	VMMemoryOverheadPercent float64
	// ReservedENIs are network interfaces of the default card kept for
	// other uses (VPC CNI custom networking), left out of the pod limit
	// (the reference's --reserved-enis).
	ReservedENIs int
	// Cluster is what the launch templates' user data joins nodes to
	// (a *ClusterDiscovery).
	Cluster Cluster
	// Pricing is the Price List API for on-demand prices, at the
	// partition's endpoint (PricingRegion); over the embedded table
	// (docs/aws.md, "Prices"), which alone prices when it is nil.
	Pricing Pricing
	// IsolatedVPC: the Price List API cannot be reached, only the
	// embedded table prices (the reference's --isolated-vpc).
	IsolatedVPC bool
	// PriceMetrics count the types without an on-demand price; nil, none.
	PriceMetrics *PriceMetrics
	// SQS reads InterruptionQueue, the queue EventBridge sends the
	// cluster's instance events to; either empty: no interruptions.
	SQS               SQS
	InterruptionQueue string
	// FleetBatch is the window identical CreateFleet requests are
	// batched in; its zero fields are the reference's (FleetBatchIdle,
	// FleetBatchMax, FleetBatchMaxItems).
	FleetBatch FleetBatchOptions
	// InterruptionWait is how long one poll of the queue waits for a
	// message (SQS long polling, whole seconds up to 20):
	// DefaultInterruptionWait when zero, no wait when negative.
	InterruptionWait time.Duration
	// InstanceStatusInterval is how often the instance status checks are
	// polled: DefaultInstanceStatusInterval when zero.
	InstanceStatusInterval time.Duration
}

// FleetBatchOptions close a batch of identical CreateFleet requests: Idle
// after its last request, Max after its first, or at MaxItems requests.
type FleetBatchOptions struct {
	Idle, Max time.Duration
	MaxItems  int
}

// Provider is the AWS CloudProvider. It is safe for concurrent use.
type Provider struct {
	ec2  EC2
	opts Options
	// mu guards the catalog and the reservations' launches.
	mu      sync.RWMutex
	catalog *region
	// bandwidth is networkBandwidths', read only.
	bandwidth map[string]int64
	// listed is the Price List API's last answer, unpricedSeen the
	// types without a price last logged (both under mu).
	listed       map[string]float64
	unpricedSeen string
	// launching joins Creates of one NodeClaim, so it never gets two
	// fleets; ensuring joins the makings of one launch template.
	launching, ensuring singleflight.Group
	// fleets batches identical CreateFleet requests.
	fleets *fleetBatcher
	// templatesMu guards templates: when each launch template was last
	// used (or first seen).
	templatesMu sync.Mutex
	templates   map[string]time.Time
	// subnets are the free addresses of the NodeClasses' subnets, as
	// launches know them.
	subnets *subnetIPs
	// intr is the interruption queue's notices and the instance status
	// checks' (interruptions.go).
	intr interruptState
}

// New returns a provider calling api. Its catalog loads on first use
// (Refresh reloads it).
func New(api EC2, opts Options) (*Provider, error) {
	if api == nil || opts.Clock == nil || opts.NodeClasses == nil || opts.Cluster == nil || opts.Region == "" || opts.ClusterName == "" {
		return nil, errors.New("aws provider needs an EC2 client, a clock, node classes, the cluster, a region and a cluster name")
	}
	bandwidth, err := networkBandwidths()
	if err != nil {
		return nil, err
	}
	p := &Provider{ec2: api, opts: opts, bandwidth: bandwidth, templates: map[string]time.Time{}, intr: interruptState{notices: map[noticeKey]*queued{}, messages: map[string]*pending{}}, subnets: newSubnetIPs()}
	// The batch window is EC2's request timing, not the provider's
	// notion of now: always the wall clock.
	p.fleets = newFleetBatcher(func(ctx context.Context, in *ec2.CreateFleetInput) (*ec2.CreateFleetOutput, error) {
		return api.CreateFleet(ctx, in)
	}, clock.RealClock{}, cmp.Or(opts.FleetBatch.Idle, FleetBatchIdle), cmp.Or(opts.FleetBatch.Max, FleetBatchMax), cmp.Or(opts.FleetBatch.MaxItems, FleetBatchMaxItems))
	return p, nil
}

// Name implements CloudProvider.
func (p *Provider) Name() string { return Name }

// GetSupportedNodeClasses implements CloudProvider.
func (p *Provider) GetSupportedNodeClasses() []schema.GroupVersionKind {
	return []schema.GroupVersionKind{awsv1.SchemeGroupVersion.WithKind(NodeClassKind)}
}

// nodeClass is the ready EC2NodeClass ref names, or a
// NodeClassNotReadyError.
func (p *Provider) nodeClass(ctx context.Context, ref *v1.NodeClassReference) (*awsv1.EC2NodeClass, error) {
	if err := cloudprovider.CheckNodeClassRef(p, ref); err != nil {
		return nil, err
	}
	nc, err := p.opts.NodeClasses.EC2NodeClass(ctx, ref.Name)
	if err != nil {
		return nil, cloudprovider.NewNodeClassNotReadyError(ref.Name, err)
	}
	if nc.DeletionTimestamp != nil {
		return nil, cloudprovider.NewNodeClassNotReadyError(ref.Name, errors.New("it is being deleted"))
	}
	ready := meta.FindStatusCondition(nc.Status.Conditions, awsv1.ConditionTypeReady)
	if ready == nil || ready.Status != metav1.ConditionTrue {
		why := "it has no Ready condition yet"
		if ready != nil {
			why = fmt.Sprintf("%s: %s", ready.Reason, ready.Message)
		}
		return nil, cloudprovider.NewNodeClassNotReadyError(ref.Name, errors.New(why))
	}
	return nc, nil
}
