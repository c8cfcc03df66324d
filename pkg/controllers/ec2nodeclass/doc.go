// Package ec2nodeclass is the EC2NodeClass status controller. As in the
// reference AWS provider, the provider launches from an EC2NodeClass's
// status alone, and this controller resolves that status from the spec's
// selector terms: the subnets (id, zone, zone id), security groups (id,
// name), images (id, name, requirements), active capacity reservations
// (with EC2's available and total counts), the placement group
// spec.placementGroupSelector names, and the instance profile (made for
// spec.role, see below), and the conditions SubnetsReady,
// SecurityGroupsReady, AMIsReady, InstanceProfileReady,
// CapacityReservationsReady, ValidationSucceeded, PlacementGroupReady and
// Ready (True when all the others are). It also stamps the class with
// the reference's drift hash and re-stamps the NodeClaims of another
// hash version (hash.go). Image terms by ssmParameter are read with SSM
// GetParameter.
//
// The shape is the house one: the pure Resolve (resolve.go) turns what
// the describe calls returned (Found) and now into the status; the
// queries (queries.go, alias.go) turn the spec into the calls' inputs;
// Gather (gather.go) makes the calls through the narrow EC2 interface;
// the Controller (controller.go) reads the class, gathers, resolves,
// records an event when Ready turns False, patches the status and
// requeues: every five minutes, every minute while not Ready, or sooner
// when a listed reservation ends or a capacity block turns expiring.
//
// spec.role, as in the reference: the controller makes an IAM instance
// profile for the class (instanceprofile.go decides its name, path, tags
// and the role changes; profile.go makes the IAM calls through the
// narrow IAM interface): InstanceProfileName, the reference's name for it
// until v1.7 (<cluster>_<FNV-1 of region and class name>), created under
// /karpenter/<region>/<cluster>/<uid>/ tagged with spec.tags,
// kubernetes.io/cluster/<cluster>=owned, eks:eks-cluster-name,
// karpenter.k8s.aws/ec2nodeclass and topology.kubernetes.io/region; the
// role is added to it, and a changed role replaces the previous one in
// the same profile. A role IAM does not know is ReasonRoleNotFound, any
// other IAM failure ReasonInstanceProfileCreationFailed. Such a class
// carries the reference's finalizer, karpenter.k8s.aws/termination
// (added before the profile is made, kept if the class moves to
// spec.instanceProfile); deleted, the class waits until no NodeClaim
// references it (an event says which), then the profile's role is
// removed, the profile deleted and the finalizer removed.
//
// Selection follows the reference: terms are ORed and a term's fields
// ANDed; a tag value "*" means the key with any value; security groups
// are selected by GroupName with name; images by id, by name (EC2
// wildcards) with owner (self and amazon when a name term gives none),
// or by tags. Images of other architectures than x86_64 and arm64 are
// never selected. Among the images with the same requirements the newest
// by CreationDate wins, and deprecated images are used only when no other
// image has those requirements. Capacity reservations are selected by id,
// or by tags and instanceMatchCriteria narrowed by ownerID; only active
// reservations that have not ended are listed, and a capacity block is
// expiring in its last CapacityBlockExpiringPeriod.
//
// Deviations from the reference, by design or not yet built:
//
//   - An alias (al2023@latest, bottlerocket@v1.20.5, windows2022@latest…)
//     is resolved with DescribeImages, not with the public SSM parameters
//     the reference reads: the local EC2 endpoint of the end-to-end tests
//     serves no SSM parameters. The images are
//     amazon's whose names follow the family's public EKS naming for the
//     cluster's Kubernetes minor version (Options.KubernetesVersion) and
//     the alias's version, any release for latest; the newest per
//     architecture and variant wins, with the variant requirements the
//     reference gives (standard: no GPU nor accelerator; nvidia: a GPU;
//     neuron: an accelerator; Windows: its OS and build). For latest this
//     is the newest image published, which may for a while differ from
//     the one the reference's "recommended" parameter names.
//   - A role change replaces the role in the class's one profile, as
//     the reference did until v1.7; since then the reference makes a new
//     profile per role and garbage-collects the old ones, so running
//     instances keep their role. Capstan's swap changes the role of the
//     instances already running with the profile.
//   - A class whose AMI family's user data needs what the cluster's
//     discovery (Options.Cluster: the flags, eks:DescribeCluster) cannot
//     tell is ValidationSucceeded False (ReasonClusterResolutionFailed),
//     so nothing launches from it: the reference's
//     ClusterCIDRResolutionFailed, here for the API server endpoint and CA
//     as well, since the reference exits at startup without them.
//   - A failed describe call keeps the part of the status it resolved for
//     the current generation, so an EC2 hiccup does not take a Ready
//     class down; the reconcile returns the error and is retried.
package ec2nodeclass
