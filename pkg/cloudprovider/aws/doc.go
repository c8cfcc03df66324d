// Package aws is Capstan's AWS provider: the CloudProvider behind the
// `aws` value of --cloud-provider, on the official SDK (aws-sdk-go-v2),
// for the karpenter.k8s.aws/v1 EC2NodeClass.
//
//   - Instance types come from DescribeInstanceTypes and
//     DescribeInstanceTypeOfferings (which zones sell which types), with
//     zone IDs from the NodeClass's subnets, spot prices from
//     DescribeSpotPriceHistory and on-demand prices from the partition's
//     Price List endpoint over an embedded table (prices.go,
//     pricetable.go; docs/aws.md "Prices").
//     Refresh reloads them; the provider's controller calls it
//     periodically. Offerings are each type × the zones of the
//     NodeClass's subnets (status.subnets) × spot and on-demand, plus one
//     reserved offering per capacity reservation in status, with the free
//     slots DescribeCapacityReservations last reported less the launches
//     since. Each type's capacity, overhead and labels are pure functions
//     of its InstanceTypeInfo, the EC2NodeClass and the flags, as the
//     reference computes them (shape.go, overhead.go, labels.go,
//     blockdevices.go; docs/aws.md lists every formula).
//   - Create launches with CreateFleet (type instant) over the offerings
//     CloudProvider.Create's contract chooses (cloudprovider.
//     LaunchCandidates): one override per instance type × the zone's
//     subnet with the most free addresses (subnets.go),
//     price-capacity-optimized for spot, lowest-price for on-demand, and
//     a launch template per NodePool × AMI × capacity reservation ×
//     spot or not × pod limit, created on demand (and again when deleted outside
//     Capstan) and tagged, with what it launches, as the controller
//     policies in docs/iam require. Capacity blocks and
//     interruptible reservations launch with the market type and target
//     capacity type EC2 requires of them (reserved.go); an answer without
//     the instance's SubnetId is resolved from the echoed override.
//     Fleet errors become typed errors per offering
//     (InsufficientCapacityError with AWS's codes), so fallback works as
//     with the simulated cloud. Create is idempotent by NodeClaim name
//     (the karpenter.sh/nodeclaim tag). Launches run side by side, and
//     identical ones within a short window go out as one fleet of as
//     many instances (fleetbatch.go), whose instances are then tagged
//     with their NodeClaims (docs/aws.md, "Launch concurrency").
//   - The launch templates' user data joins nodes to the cluster as each
//     AMI family's own software reads it (userdata.go, mime.go,
//     bottlerocket.go): AL2023 a nodeadm NodeConfig (nodeadm's Go types)
//     in a MIME document after the user's parts, AL2 bootstrap.sh as a
//     MIME part after the user's, Bottlerocket TOML settings. What nodes
//     join, the API server, its CA and the service CIDR, comes from
//     eks:DescribeCluster unless the flags override it, and the cluster
//     DNS address from the kube-dns Service (ClusterDiscovery, cluster.go).
//   - Instances carry tags naming the cluster, NodePool, NodeClaim and
//     EC2NodeClass; Get, List and Delete (TerminateInstances) find them
//     by those tags, and garbage collection terminates leaked ones.
//
// Credentials and the endpoint come from the SDK's default chain (IRSA,
// Pod Identity, environment), with --aws-region and an endpoint override
// (for the local EC2 endpoint the tests run against).
package aws
