// Package ec2endpoint serves the EC2 Query API over Capstan's simulated
// cloud (pkg/cloudprovider/sim), so an AWS cloud provider built on the
// real aws-sdk-go-v2 can be tested without AWS: capacity, spot prices,
// reservations, insufficient capacity and interruptions behave exactly as
// the cloud profile says, and errors carry AWS's codes in EC2's XML.
//
// A test starts one with
//
//	srv, _ := ec2endpoint.New(ec2endpoint.Options{Profile: p, Clock: clk, ClusterName: "c"})
//	hs := httptest.NewServer(srv)
//	client := ec2.New(ec2.Options{Region: "us-west-2", BaseEndpoint: aws.String(hs.URL),
//		Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", ""),
//		RetryMaxAttempts: 1, HTTPClient: ec2endpoint.NewHTTPClient()})
//
// (NewHTTPClient works around an SDK race that only a server this fast
// trips; see it.) hack/ec2endpoint runs one as a process.
//
// # Protocol
//
// Requests are EC2 Query forms (Action, Version, the SDK's flattened
// lists: InstanceType.1, Filter.1.Value.2,
// LaunchTemplateConfigs.1.Overrides.2.SubnetId), answered with EC2's
// documents: <ActionResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/">
// with a <requestId> and EC2's element names (item lists, instancesSet,
// reservationSet, tagSet, ...). Errors are HTTP 400 (412 for DryRun,
// which always "would have succeeded"; 500 InternalError for the
// endpoint's own failures) with
// <Response><Errors><Error><Code/><Message/></Error></Errors><RequestID/></Response>.
// An action not served is InvalidAction. Filters take EC2's * and ?
// wildcards and tag:KEY, tag-key and tag-value where the resource is
// tagged; an unknown filter name is InvalidParameterValue. NextToken and
// MaxResults page where EC2 does; DescribeInstanceTypes pages by 100
// without MaxResults, as EC2 does.
//
// # Served
//
// DescribeInstanceTypes (the catalog's types sold in the profile's
// region, and a few more: AMD, Habana and Neuron accelerators, several
// network cards, a paravirtual Xen type; vCPUs, memory, architecture,
// and as AWS publishes them the network cards and interfaces, hypervisor,
// virtualization, GPUs, Neuron devices, EFA, local NVMe, bandwidths:
// published.go, networklimits.go, with their sources),
// DescribeInstanceTypeOfferings (every type in every zone of the profile,
// by region, zone or zone ID), DescribeAvailabilityZones (the profile's
// zones with the IDs the sim labels nodes with), DescribeSpotPriceHistory
// (each pool's current spot price, Linux/UNIX, stamped now),
// DescribeSubnets, DescribeSecurityGroups, DescribeImages,
// DescribeCapacityReservations (the profile's reservations, their true
// use, state, match criteria, end, tags), DescribePlacementGroups
// (Options.PlacementGroups), CreateLaunchTemplate,
// DescribeLaunchTemplates, DescribeLaunchTemplateVersions (image, type,
// user data, groups, profile, block devices), DeleteLaunchTemplate (in
// memory, one version each, names unique), CreateFleet (instant), DescribeInstances,
// TerminateInstances, CreateTags and CopyImage (within the region: an
// AMI of the account's made now, so that a new image can match an
// EC2NodeClass's selector). Every other EC2 action is not served.
//
// The same listener speaks three JSON protocols, told apart by
// X-Amz-Target. SSM: GetParameter over Options.Parameters (no public
// parameters are synthesized: aliases resolve with DescribeImages). SQS (GetQueueUrl, ReceiveMessage with long polling,
// DeleteMessage, SendMessage): one queue, Options.InterruptionQueue
// (default the cluster name), whose messages are the cloud's interruption
// notices as EventBridge delivers EC2's: "EC2 Spot Instance Interruption
// Warning" (instance-action terminate; also for a spot price risen above
// the instance's max price, which is how EC2 interrupts for price), "EC2
// Instance Rebalance Recommendation", an "AWS Health Event" of category
// scheduledChange naming the instance in affectedEntities, and "EC2
// Instance State-change Notification" (stopping, shutting-down). Each
// notice is queued once; a received message is hidden for its visibility
// timeout (on Options.Clock) and comes back until deleted. The Price List
// API (GetProducts, ServiceCode AmazonEC2): one Linux on-demand product
// per catalog type sold in the region, at the catalog's price, with the
// attributes Karpenter-style providers filter on (regionCode, tenancy,
// productFamily "Compute Instance", or "Compute Instance (bare metal)"
// with tenancy Dedicated for metal sizes, operatingSystem,
// preInstalledSw, capacitystatus, marketoption, ...), and beside it the
// same type under another tenancy, Windows, SQL Server, an unused
// reservation and a capacity block, at other prices, so only the
// reference's filters get the on-demand price.
//
// The same listener also speaks the IAM Query API (a form with Version
// 2010-05-08, or a SigV4 scope for service iam), for the instance
// profiles an EC2NodeClass's spec.role needs: GetInstanceProfile,
// CreateInstanceProfile (Path, Tags), AddRoleToInstanceProfile,
// RemoveRoleFromInstanceProfile, DeleteInstanceProfile,
// TagInstanceProfile and GetRole. Answers are IAM's documents
// (<ActionResponse xmlns="https://iam.amazonaws.com/doc/2010-05-08/">
// with <ActionResult> and <ResponseMetadata>), errors IAM's
// <ErrorResponse><Error><Type/><Code/><Message/></Error><RequestId/>:
// NoSuchEntity (404) for a missing profile or role, EntityAlreadyExists
// (409), LimitExceeded (409) for a second role in a profile, as IAM
// allows one, DeleteConflict (409) for deleting a profile that still
// holds its role, ValidationError (400) for a bad name or path. The
// account's roles are Options.Roles (default KarpenterNodeRole-<cluster>
// and capstan-node-role); profiles live in memory only
// (Server.InstanceProfiles lists them).
//
// The same listener serves EKS's REST-JSON DescribeCluster (GET
// /clusters/{name}, as aws-sdk-go-v2/service/eks calls it): the one
// cluster, Options.ClusterName, ACTIVE with Options.ClusterEndpoint and
// ClusterCABundle (CREATING, without either, when they are not given, as
// EKS answers while it makes them), its service CIDR (Options.ServiceCIDR,
// default 172.20.0.0/16, EKS's pick for the endpoint's 10.0.0.0/16 VPC)
// and its ARN (ClusterARN, arn:aws:eks:<region>:<account>:cluster/<name>,
// the resource of the action ActionDescribeCluster, eks:DescribeCluster,
// which eksRoute names for every EKS request). Another name is EKS's
// ResourceNotFoundException (HTTP 404, X-Amzn-ErrorType).
//
// # User data
//
// EC2 accepts any user data that is base64 and at most 16 KB raw
// (otherwise CreateLaunchTemplate fails with InvalidUserData.Malformed,
// as here); what the node makes of it EC2 never checks: a node whose
// software refuses its user data runs and never joins. The endpoint does
// the same, deliberately visible: at each launch it reads the launch
// template's user data as the image's own software would (the AL2023 and
// custom images: nodeadm, NodeadmCluster; the Bottlerocket images: its
// settings model, BottlerocketKubernetes) and, when the node would not
// join, the instance launches and runs but its kubelet never registers a
// Node; Server.NotJoined says why, by instance id, and the endpoint logs
// it. A node would not join when nodeadm finds no NodeConfig, or one
// missing cluster.name, apiServerEndpoint, certificateAuthority or cidr
// (nodeadm's validation), or a MIME document whose parts do not parse;
// when a Bottlerocket setting fails its modeled type (a taint not
// [value]:Effect, a label key or value, cluster-dns-ip, api-server,
// cluster-certificate, max-pods...) or cluster-name, api-server or
// cluster-certificate is missing; or when the user data names another
// cluster than the endpoint's: another name, API server or CA (the node
// cannot reach it), or another service CIDR (the node joins, but its pods
// get a wrong nameserver). Stricter than the nodes, on purpose: a
// NodeConfig field nodeadm's v1alpha1 types do not have (nodeadm drops
// it unseen; the types are the nodeadm module version go.mod names, from
// 2024-02, so a field added to nodeadm since is refused too) or a kubelet
// config key KubeletConfiguration v1beta1 does not have is refused; the
// comparison with the cluster is the endpoint's own. Instances the sim
// re-registers after a restart of the endpoint are not read again.
//
// A Node that joins reports what its kubelet would (nodeCapacity): pods
// as the user data's maxPods (nodeadm's kubelet.config.maxPods,
// Bottlerocket's max-pods), else the VPC CNI's limit on the default
// network card; ephemeral storage as the volume the kubelet's root
// directory is on (AL2023's /dev/xvda, Bottlerocket's /dev/xvdb, as the
// template maps it, else the image's 20 GiB); and the extended resources
// its accelerators' device plugins advertise (nvidia.com/gpu,
// amd.com/gpu, habana.ai/gaudi, aws.amazon.com/neuron and neuroncore,
// vpc.amazonaws.com/efa). An override of a paravirtual-only type (every
// image is HVM) fails with EC2's InvalidParameterCombination.
//
// # Synthesized resources
//
// Account Options.AccountID (default 111122223333). One VPC,
// vpc-00000000000000001 (10.0.0.0/16). Each zone, in the profile's
// order, has its /19 (10.0.0.0/19, 10.0.32.0/19, ...) and in it the
// profile's subnets for the zone, in order and aligned to their size, or
// one subnet of the whole /19: subnet-00000000000000001 onwards, each
// zone's first subnet in zone order, then the others; tagged
// Name=<cluster>-private-<zone>, karpenter.sh/discovery=<cluster>,
// kubernetes.io/role/internal-elb=1, or with the profile's tags. A
// subnet's free addresses are its size less AWS's five, the profile's
// used addresses and one per network interface of each instance running
// in it; a launch into a subnet with too few is refused with
// InsufficientFreeAddressesInSubnet. Security groups sg-00000000000000001
// (eks-cluster-sg-<cluster>, tagged as EKS tags a cluster's group:
// aws:eks:cluster-name, kubernetes.io/cluster/<cluster>=owned) and
// sg-00000000000000002 (<cluster>-node); both tagged Name and
// karpenter.sh/discovery=<cluster>. AMIs, ami-00000000000000001 onwards,
// owned by "amazon" (602401143452 for EKS's, 092701018921 for
// Bottlerocket's): for each Kubernetes version of Options (default
// DefaultKubernetesVersion) and two releases (2025-01-10 and
// 2025-06-10), amazon-eks-node-al2023-{x86_64,arm64}-{standard,nvidia}-<k8s>-v<date>
// and bottlerocket-aws-k8s-<k8s>-[nvidia-]{x86_64,aarch64}-v<version>;
// plus the account's own <cluster>-custom-al2023-x86_64, tagged
// karpenter.sh/discovery=<cluster>. Instances keep the sim's ids (i- and
// 12 hex digits); their private address is in their zone's subnet and
// their private DNS name, ip-10-0-….<region>.compute.internal, names
// their Node; the Node's spec.providerID is aws:///<zone>/<instance id>.
//
// # CreateFleet
//
// Only instant fleets. Each override (or a template without overrides)
// is an instance type in a zone: its subnet's zone, else its
// AvailabilityZone, else the template's subnet or placement, else every
// zone; the image is the override's, else the template's. The capacity
// type is DefaultTargetCapacityType. Spot tries the overrides in the
// order of SpotOptions.AllocationStrategy (lowest-price, the default, and
// diversified: cheapest first; price-capacity-optimized: cheapest, the
// deeper pool among equal prices, as the sim's own spot launches;
// capacity-optimized: the deepest pool; capacity-optimized-prioritized:
// the deepest, then Priority), capped by each override's MaxPrice, else
// the on-demand price. On-demand tries them by OnDemandOptions
// (lowest-price, the default, or prioritized by Priority). A template
// whose CapacityReservationSpecification targets a reservation launches
// into it (reserved capacity in the sim, on-demand to EC2), as does one
// whose preference is capacity-reservations-only into an open
// reservation of the override's type and zone; those overrides are tried
// before the template-free ones. An on-demand launch under a template
// whose preference is open (EC2's default) lands in an open reservation
// with room for the type and zone it chose, and with
// use-capacity-reservations-first those overrides come first. The first
// override with capacity launches; each override tried before it, or
// every override when none has capacity (then the fleet launches
// nothing, with HTTP 200 as EC2 does), is reported in Errors with its
// LaunchTemplateAndOverrides as requested, the lifecycle, and:
//
//	InsufficientInstanceCapacity  the pool is empty (profile capacity count 0, or used up)
//	MaxSpotInstanceCountExceeded  the account runs the profile's maxSpotInstances spot instances
//	SpotMaxPriceTooLow            the spot price is above MaxPrice (or the on-demand price); EC2 lists
//	                              the code in its API error codes ("Error codes for the Amazon EC2
//	                              API": the Spot maximum price is below the Spot price)
//	ReservationCapacityExceeded   the reservation is full, not active, or (capacity-reservations-only) none fits
//	Unsupported                   the override's type or zone is not the targeted reservation's
//
// These are the sim's own reasons (cloudprovider's capacity error codes)
// passed through. The profile's launchFaults add their codes on the
// overrides they match, with the fault's message or EC2's for the code
// (UnauthorizedOperation, AuthFailure.ServiceLinkedRoleCreationNotPermitted,
// InvalidParameterValue "Invalid IAM Instance Profile name", ...). A
// launch into a capacity block needs the template's
// MarketType capacity-block and a capacity-block fleet; one into an
// interruptible reservation MarketType interruptible-capacity-reservation
// and a reserved-capacity fleet whose ReservedCapacityOptions name that
// reservation type; either market type elsewhere, or a reservation
// without its own, fails its overrides with InvalidParameterValue and
// EC2's message. With Options.InstanceMetadataTags (an account whose
// default puts instance tags in instance metadata), or a template that
// enables them, a tag key outside EC2's metadata tag pattern ("/" in
// kubernetes.io/cluster/...) fails the overrides with InvalidParameterValue
// too, unless the template disables them. Options.OmitFleetInstancePlacement
// answers without the fleet instances' subnetId, availabilityZone and
// availabilityZoneId, as EC2 did before its model had them.
// VcpuLimitExceeded and InstanceLimitExceeded are never
// returned: the sim has no quota other than maxSpotInstances. Tags from
// the fleet's instance TagSpecification (over the template's) are the
// instance's; karpenter.sh/nodeclaim names its NodeClaim in the sim. A
// repeated ClientToken gets the first answer, a refusal included (until the endpoint
// restarts). Requests EC2 would refuse whole (unknown template, subnet,
// image, security group, reservation or instance type; another fleet
// type; a capacity-block or reserved-capacity fleet whose template does
// not launch into reservations; ReservedCapacityOptions without
// reserved-capacity, OnDemandOptions.CapacityReservationOptions with
// capacity-block) fail with EC2's codes.
//
// TotalTargetCapacity N launches up to N instances, each as above; the
// fleet stops at the first that finds no capacity and answers the
// instances it launched with that one's errors (a partly fulfilled
// instant fleet). Options.CreateFleetLatency (ec2endpoint's
// --create-fleet-latency) delays every answer, requests waiting it out
// concurrently as EC2 serves them, so a caller that launches one fleet at
// a time pays it per node, as on real EC2.
//
// # Instances
//
// DescribeInstances reports pending until the profile's launch latency
// has passed (when the Node registers), then running; stopped and
// terminated as the sim has them (the sim terminates at once, so
// shutting-down is only TerminateInstances' answer). Terminated
// instances stay listed. Spot instances carry InstanceLifecycle spot and
// a SpotInstanceRequestId, capacity blocks capacity-block, interruptible
// reservations interruptible-capacity-reservation, reserved ones
// their CapacityReservationId and the template's reservation preference.
// TerminateInstances answers terminated → terminated for an instance
// already terminated; an id the sim never launched fails the call with
// InvalidInstanceID.NotFound and terminates nothing, as EC2 does.
// Instances, their tags and attributes live in the sim's state file and
// survive a restart; launch templates and client tokens do not.
//
// # Authorization
//
// Started with Options.PolicyTemplates (CloudFormation templates of IAM
// policies, as docs/iam ships; hack/ec2endpoint's --iam-policy), the
// endpoint authorizes every request as IAM would, with package iampolicy,
// through one function (authorize: an action, its resources with their
// ARNs, tags and request tags, and the request's condition keys). Requests
// signed with AdminAccessKeyID are the administrator's and never refused.
// Each action is checked on the resource types the Service Authorization
// Reference lists for it: Describe* and pricing:GetProducts on *, with
// aws:RequestedRegion from the SigV4 scope; CreateLaunchTemplate on the
// new template with its tags, and ec2:CreateTags with ec2:CreateAction;
// DeleteLaunchTemplate, TerminateInstances and CreateTags on the existing
// resources and their tags; IAM actions on the instance profile (creating
// one with tags also needs iam:TagInstanceProfile); SQS on the queue's
// ARN. CreateFleet is checked twice, as EC2 reports it: ec2:CreateFleet on
// the fleet and on every template, subnet, security group, image, snapshot
// and reservation it names fails the request; for each override, the
// launch an instant fleet makes with the caller's permissions
// (ec2:RunInstances on the instance, volume, network interface and, for
// spot, spot request it creates, with the tags the fleet and the
// template's data give them, and on what it uses; ec2:CreateTags for what
// it tags; iam:PassRole on the role of the template's instance profile,
// when IAM has it) fails that override among the fleet's errors. Refusals
// answer as each service does, HTTP 403: EC2 UnauthorizedOperation ("You
// are not authorized to perform this operation. User: ... is not
// authorized to perform: ACTION on resource: ARN because no identity-based
// policy allows the ACTION action. Encoded authorization failure message:
// ..."), IAM AccessDenied, SQS AccessDenied, the Price List
// AccessDeniedException. Tag specifications are read for every resource
// type; a type the operation cannot tag (CreateFleet: fleet, instance,
// volume; launch template data: instance, volume, network-interface,
// spot-instances-request) is InvalidParameterValue.
package ec2endpoint
