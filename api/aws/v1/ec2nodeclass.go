package v1

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// EC2NodeClass is how Capstan launches EC2 instances for the NodePools that
// reference it: identity, image, network, storage and instance settings.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=ec2nodeclasses,scope=Cluster,categories=karpenter,shortName={ec2nc,ec2ncs}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="Role",type="string",JSONPath=".spec.role",priority=1
type EC2NodeClass struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is optional, as in the reference's schema.
	//
	// +kubebuilder:validation:XValidation:message="must specify exactly one of ['role', 'instanceProfile']",rule="(has(self.role) && !has(self.instanceProfile)) || (!has(self.role) && has(self.instanceProfile))"
	// +kubebuilder:validation:XValidation:message="if set, amiFamily must be 'AL2' or 'Custom' when using an AL2 alias",rule="!has(self.amiFamily) || (self.amiSelectorTerms.exists(x, has(x.alias) && x.alias.find('^[^@]+') == 'al2') ? (self.amiFamily == 'Custom' || self.amiFamily == 'AL2') : true)"
	// +kubebuilder:validation:XValidation:message="if set, amiFamily must be 'AL2023' or 'Custom' when using an AL2023 alias",rule="!has(self.amiFamily) || (self.amiSelectorTerms.exists(x, has(x.alias) && x.alias.find('^[^@]+') == 'al2023') ? (self.amiFamily == 'Custom' || self.amiFamily == 'AL2023') : true)"
	// +kubebuilder:validation:XValidation:message="if set, amiFamily must be 'Bottlerocket' or 'Custom' when using a Bottlerocket alias",rule="!has(self.amiFamily) || (self.amiSelectorTerms.exists(x, has(x.alias) && x.alias.find('^[^@]+') == 'bottlerocket') ? (self.amiFamily == 'Custom' || self.amiFamily == 'Bottlerocket') : true)"
	// +kubebuilder:validation:XValidation:message="if set, amiFamily must be 'Windows2019' or 'Custom' when using a Windows2019 alias",rule="!has(self.amiFamily) || (self.amiSelectorTerms.exists(x, has(x.alias) && x.alias.find('^[^@]+') == 'windows2019') ? (self.amiFamily == 'Custom' || self.amiFamily == 'Windows2019') : true)"
	// +kubebuilder:validation:XValidation:message="if set, amiFamily must be 'Windows2022' or 'Custom' when using a Windows2022 alias",rule="!has(self.amiFamily) || (self.amiSelectorTerms.exists(x, has(x.alias) && x.alias.find('^[^@]+') == 'windows2022') ? (self.amiFamily == 'Custom' || self.amiFamily == 'Windows2022') : true)"
	// +kubebuilder:validation:XValidation:message="if set, amiFamily must be 'Windows2025' or 'Custom' when using a Windows2025 alias",rule="!has(self.amiFamily) || (self.amiSelectorTerms.exists(x, has(x.alias) && x.alias.find('^[^@]+') == 'windows2025') ? (self.amiFamily == 'Custom' || self.amiFamily == 'Windows2025') : true)"
	// +kubebuilder:validation:XValidation:message="must specify amiFamily if amiSelectorTerms does not contain an alias",rule="self.amiSelectorTerms.exists(x, has(x.alias)) ? true : has(self.amiFamily)"
	// +optional
	Spec EC2NodeClassSpec `json:"spec,omitzero"`
	// +optional
	Status EC2NodeClassStatus `json:"status,omitzero"`
}

// EC2NodeClassList is a list of EC2NodeClasses.
//
// +kubebuilder:object:root=true
type EC2NodeClassList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []EC2NodeClass `json:"items"`
}

// EC2NodeClassSpec is the desired configuration of launched instances.
type EC2NodeClassSpec struct {
	// SubnetSelectorTerms select the subnets instances launch into; terms
	// are ORed, the fields of one term ANDed.
	//
	// The "'id' is mutually exclusive" rule fails only when every term
	// combines id with tags, exactly as the reference's does: a stricter
	// rule would refuse manifests that the reference accepts.
	//
	// +kubebuilder:validation:XValidation:message="subnetSelectorTerms cannot be empty",rule="self.size() != 0"
	// +kubebuilder:validation:XValidation:message="expected at least one, got none, ['tags', 'id']",rule="self.all(x, has(x.tags) || has(x.id))"
	// +kubebuilder:validation:XValidation:message="'id' is mutually exclusive, cannot be set with a combination of other fields in a subnet selector term",rule="!self.all(x, has(x.id) && has(x.tags))"
	// +kubebuilder:validation:MaxItems=30
	// +required
	SubnetSelectorTerms []SubnetSelectorTerm `json:"subnetSelectorTerms" hash:"ignore"`
	// SecurityGroupSelectorTerms select the security groups attached to
	// instances; terms are ORed. The exclusivity rules hold only when every
	// term breaks them, as the reference's do (see SubnetSelectorTerms).
	//
	// +kubebuilder:validation:XValidation:message="securityGroupSelectorTerms cannot be empty",rule="self.size() != 0"
	// +kubebuilder:validation:XValidation:message="expected at least one, got none, ['tags', 'id', 'name']",rule="self.all(x, has(x.tags) || has(x.id) || has(x.name))"
	// +kubebuilder:validation:XValidation:message="'id' is mutually exclusive, cannot be set with a combination of other fields in a security group selector term",rule="!self.all(x, has(x.id) && (has(x.tags) || has(x.name)))"
	// +kubebuilder:validation:XValidation:message="'name' is mutually exclusive, cannot be set with a combination of other fields in a security group selector term",rule="!self.all(x, has(x.name) && (has(x.tags) || has(x.id)))"
	// +kubebuilder:validation:MaxItems=30
	// +required
	SecurityGroupSelectorTerms []SecurityGroupSelectorTerm `json:"securityGroupSelectorTerms" hash:"ignore"`
	// CapacityReservationSelectorTerms select the capacity reservations
	// launches may use; terms are ORed. A reservation no term selects is
	// never used, not even an open one (compat decision 1).
	//
	// +kubebuilder:validation:XValidation:message="expected at least one, got none, ['tags', 'id', 'instanceMatchCriteria']",rule="self.all(x, has(x.tags) || has(x.id) || has(x.instanceMatchCriteria))"
	// +kubebuilder:validation:XValidation:message="'id' is mutually exclusive, cannot be set along with other fields in a capacity reservation selector term",rule="!self.all(x, has(x.id) && (has(x.tags) || has(x.ownerID) || has(x.instanceMatchCriteria)))"
	// +kubebuilder:validation:MaxItems=30
	// +optional
	CapacityReservationSelectorTerms []CapacityReservationSelectorTerm `json:"capacityReservationSelectorTerms,omitempty" hash:"ignore"`
	// PlacementGroupSelector names the placement group instances launch
	// into, by name or by id; the controller resolves it into
	// status.placementGroup (PlacementGroupReady).
	// +kubebuilder:validation:XValidation:message="expected at least one, got none, ['name', 'id']",rule="has(self.name) || has(self.id)"
	// +kubebuilder:validation:XValidation:message="'name' and 'id' are mutually exclusive",rule="!(has(self.name) && has(self.id))"
	// +optional
	PlacementGroupSelector *PlacementGroupSelector `json:"placementGroupSelector,omitempty"`
	// AssociatePublicIPAddress gives instances a public IPv4 address;
	// unset leaves it to the subnet's setting.
	// +optional
	AssociatePublicIPAddress *bool `json:"associatePublicIPAddress,omitempty"`
	// IPPrefixCount is how many IPv4 /28 prefixes EC2 assigns to the
	// primary network interface at launch.
	// +kubebuilder:validation:Minimum=0
	// +optional
	IPPrefixCount *int32 `json:"ipPrefixCount,omitempty" hash:"ignore"`
	// AMISelectorTerms select the images instances boot; terms are ORed.
	// An alias (family@version, e.g. al2023@latest) names the EKS-optimized
	// image of a family and must be the only term.
	//
	// +kubebuilder:validation:XValidation:message="expected at least one, got none, ['tags', 'id', 'name', 'alias', 'ssmParameter']",rule="self.all(x, has(x.tags) || has(x.id) || has(x.name) || has(x.alias) || has(x.ssmParameter))"
	// +kubebuilder:validation:XValidation:message="'id' is mutually exclusive, cannot be set with a combination of other fields in amiSelectorTerms",rule="!self.exists(x, has(x.id) && (has(x.alias) || has(x.tags) || has(x.name) || has(x.owner)))"
	// +kubebuilder:validation:XValidation:message="'alias' is mutually exclusive, cannot be set with a combination of other fields in amiSelectorTerms",rule="!self.exists(x, has(x.alias) && (has(x.id) || has(x.tags) || has(x.name) || has(x.owner)))"
	// +kubebuilder:validation:XValidation:message="'alias' is mutually exclusive, cannot be set with a combination of other amiSelectorTerms",rule="!(self.exists(x, has(x.alias)) && self.size() != 1)"
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=30
	// +required
	AMISelectorTerms []AMISelectorTerm `json:"amiSelectorTerms" hash:"ignore"`
	// AMIFamily decides the user data format and default block devices.
	// With an alias it may be left out (the alias names the family) or be
	// that family or Custom; without an alias it is required.
	// +kubebuilder:validation:Enum={AL2,AL2023,Bottlerocket,Custom,Windows2019,Windows2022,Windows2025}
	// +optional
	AMIFamily *string `json:"amiFamily,omitempty" hash:"ignore"`
	// UserData is passed to instances, in the AMI family's format; the
	// provider merges what a node needs to join the cluster into it
	// (Bottlerocket: the user's TOML settings under the node's).
	// +optional
	UserData *string `json:"userData,omitempty"`
	// Role is the IAM role instances assume, through an instance profile
	// the provider manages. Exactly one of role and instanceProfile is set.
	// The reference lets role change (since v1.7), and so does the schema.
	// Capstan creates the instance profile, adds the role to it (replacing
	// the previous role when role changes) and deletes it with the class.
	// +kubebuilder:validation:XValidation:message="role cannot be empty",rule="self != ''"
	// +optional
	Role string `json:"role,omitempty"`
	// InstanceProfile is an existing instance profile instances use, for
	// those who manage IAM themselves.
	// +kubebuilder:validation:XValidation:message="instanceProfile cannot be empty",rule="self != ''"
	// +optional
	InstanceProfile *string `json:"instanceProfile,omitempty"`
	// Tags are set on instances, volumes and launch templates. The keys
	// Capstan sets itself to find and own its resources are refused.
	// +kubebuilder:validation:XValidation:message="empty tag keys aren't supported",rule="self.all(k, k != '')"
	// +kubebuilder:validation:XValidation:message="tag contains a restricted tag matching eks:eks-cluster-name",rule="self.all(k, k !='eks:eks-cluster-name')"
	// +kubebuilder:validation:XValidation:message="tag contains a restricted tag matching kubernetes.io/cluster/",rule="self.all(k, !k.startsWith('kubernetes.io/cluster') )"
	// +kubebuilder:validation:XValidation:message="tag contains a restricted tag matching karpenter.sh/nodepool",rule="self.all(k, k != 'karpenter.sh/nodepool')"
	// +kubebuilder:validation:XValidation:message="tag contains a restricted tag matching karpenter.sh/nodeclaim",rule="self.all(k, k !='karpenter.sh/nodeclaim')"
	// +kubebuilder:validation:XValidation:message="tag contains a restricted tag matching karpenter.k8s.aws/ec2nodeclass",rule="self.all(k, k !='karpenter.k8s.aws/ec2nodeclass')"
	// +optional
	Tags map[string]string `json:"tags,omitempty"`
	// Kubelet configures the kubelet of launched nodes: AL2023 nodes get
	// all of it in their nodeadm configuration, AL2 and Bottlerocket nodes
	// maxPods only; maxPods, podsPerCore, kubeReserved, systemReserved and
	// absolute evictionHard thresholds count in a node's allocatable.
	// +optional
	Kubelet *KubeletConfiguration `json:"kubelet,omitempty"`
	// BlockDeviceMappings are the volumes attached to instances; unset
	// means the AMI family's default root volume.
	// +kubebuilder:validation:XValidation:message="must have only one blockDeviceMappings with rootVolume",rule="self.filter(x, has(x.rootVolume)?x.rootVolume==true:false).size() <= 1"
	// +kubebuilder:validation:MaxItems=50
	// +optional
	BlockDeviceMappings []BlockDeviceMapping `json:"blockDeviceMappings,omitempty"`
	// InstanceStorePolicy is what to do with the instance's local NVMe
	// disks: RAID0 makes them one array for the kubelet and containerd.
	// +optional
	InstanceStorePolicy *InstanceStorePolicy `json:"instanceStorePolicy,omitempty"`
	// NetworkInterfaces are the network interfaces instances launch with,
	// each on a network card and device index: ENA interfaces
	// ("interface", which the primary one on card 0, device 0 must be) and
	// EFA-only ones. Unset: one primary interface.
	// +kubebuilder:validation:XValidation:message="networkInterfaces must include a primary interface with interfaceType='interface'",rule="self.size() == 0 || self.exists(x, x.deviceIndex == 0 && x.networkCardIndex == 0 && x.interfaceType == 'interface')"
	// +kubebuilder:validation:XValidation:message="networkInterfaces must not have duplicate networkCardIndex and deviceIndex pairs, and can have at most one efa device per network card",rule="self.all(x, self.filter(y, x.networkCardIndex == y.networkCardIndex && x.deviceIndex == y.deviceIndex).size() == 1 && (x.interfaceType != 'efa-only' || self.filter(y, x.networkCardIndex == y.networkCardIndex && y.interfaceType == 'efa-only').size() == 1))"
	// +kubebuilder:validation:MaxItems=150
	// +optional
	NetworkInterfaces []NetworkInterface `json:"networkInterfaces,omitempty"`
	// DetailedMonitoring turns on 1-minute CloudWatch metrics.
	// +optional
	DetailedMonitoring *bool `json:"detailedMonitoring,omitempty"`
	// MetadataOptions expose the instance metadata service to the node.
	// The defaults (IMDSv2 required, one hop) keep pods from reaching the
	// node's credentials.
	// +kubebuilder:default={"httpEndpoint":"enabled","httpProtocolIPv6":"disabled","httpPutResponseHopLimit":1,"httpTokens":"required"}
	// +optional
	MetadataOptions *MetadataOptions `json:"metadataOptions,omitempty"`
	// ConnectionTracking sets the idle connection tracking timeouts of the
	// network interfaces of the launch template (not of EFA-only ones, nor
	// of those the CNI adds later).
	// +optional
	ConnectionTracking *ConnectionTracking `json:"connectionTracking,omitempty"`
	// Context is EC2's reserved fleet context, passed to CreateFleet.
	// +optional
	Context *string `json:"context,omitempty"`
	// CPUOptions are the instances' CPU options.
	// +optional
	CPUOptions *CPUOptions `json:"cpuOptions,omitempty"`
}

// PlacementGroupSelector names one placement group, by name or by id.
type PlacementGroupSelector struct {
	// Name of the placement group.
	// +kubebuilder:validation:MinLength=1
	// +optional
	Name *string `json:"name,omitempty"`
	// ID of the placement group, e.g. pg-0a1b2c.
	// +kubebuilder:validation:Pattern="^pg-[0-9a-z]+$"
	// +optional
	ID *string `json:"id,omitempty"`
}

// SubnetSelectorTerm selects subnets by id or by tags.
type SubnetSelectorTerm struct {
	// Tags the subnet must carry; "*" matches any value.
	// +kubebuilder:validation:XValidation:message="empty tag keys or values aren't supported",rule="self.all(k, k != '' && self[k] != '')"
	// +kubebuilder:validation:MaxProperties=20
	// +optional
	Tags map[string]string `json:"tags,omitempty"`
	// ID of one subnet, e.g. subnet-0a1b2c.
	// +kubebuilder:validation:Pattern="subnet-[0-9a-z]+"
	// +optional
	ID string `json:"id,omitempty"`
}

// SecurityGroupSelectorTerm selects security groups by id, by name or by
// tags.
type SecurityGroupSelectorTerm struct {
	// Tags the security group must carry; "*" matches any value.
	// +kubebuilder:validation:XValidation:message="empty tag keys or values aren't supported",rule="self.all(k, k != '' && self[k] != '')"
	// +kubebuilder:validation:MaxProperties=20
	// +optional
	Tags map[string]string `json:"tags,omitempty"`
	// ID of one security group, e.g. sg-0a1b2c.
	// +kubebuilder:validation:Pattern="sg-[0-9a-z]+"
	// +optional
	ID string `json:"id,omitempty"`
	// Name is the group's GroupName, not its Name tag.
	// +optional
	Name string `json:"name,omitempty"`
}

// InstanceMatchCriteria is which launches a capacity reservation takes:
// any matching one (open) or only those that target it (targeted).
// +kubebuilder:validation:Enum=open;targeted
type InstanceMatchCriteria string

// Instance match criteria.
const (
	InstanceMatchCriteriaOpen     = InstanceMatchCriteria("open")
	InstanceMatchCriteriaTargeted = InstanceMatchCriteria("targeted")
)

// CapacityReservationSelectorTerm selects capacity reservations by id, or
// by tags, owner and match criteria.
type CapacityReservationSelectorTerm struct {
	// Tags the reservation must carry; "*" matches any value.
	// +kubebuilder:validation:XValidation:message="empty tag keys or values aren't supported",rule="self.all(k, k != '' && self[k] != '')"
	// +kubebuilder:validation:MaxProperties=20
	// +optional
	Tags map[string]string `json:"tags,omitempty"`
	// ID of one reservation, e.g. cr-0a1b2c.
	// +kubebuilder:validation:Pattern="^cr-[0-9a-z]+$"
	// +optional
	ID string `json:"id,omitempty"`
	// OwnerID is the 12-digit account that owns the reservation; it narrows
	// a term and cannot select on its own.
	// +kubebuilder:validation:Pattern="^[0-9]{12}$"
	// +optional
	OwnerID string `json:"ownerID,omitempty"`
	// InstanceMatchCriteria selects reservations of that kind.
	// +optional
	InstanceMatchCriteria InstanceMatchCriteria `json:"instanceMatchCriteria,omitempty"`
}

// AMISelectorTerm selects images by alias, id, name (with owner), tags or
// SSM parameter.
type AMISelectorTerm struct {
	// Alias is "family@version": family one of al2, al2023, bottlerocket,
	// windows2019, windows2022, windows2025; version a release (e.g.
	// al2023@v20240625) or latest, the only version Windows takes. latest
	// follows new releases, so nodes drift when one comes out.
	// +kubebuilder:validation:XValidation:message="'alias' is improperly formatted, must match the format 'family@version'",rule="self.matches('^[a-zA-Z0-9]+@.+$')"
	// +kubebuilder:validation:XValidation:message="family is not supported, must be one of the following: 'al2', 'al2023', 'bottlerocket', 'windows2019', 'windows2022', 'windows2025'",rule="self.split('@')[0] in ['al2','al2023','bottlerocket','windows2019','windows2022','windows2025']"
	// +kubebuilder:validation:XValidation:message="windows families may only specify version 'latest'",rule="self.split('@')[0] in ['windows2019','windows2022','windows2025'] ? self.split('@')[1] == 'latest' : true"
	// +kubebuilder:validation:MaxLength=30
	// +optional
	Alias string `json:"alias,omitempty"`
	// Tags the image must carry; "*" matches any value.
	// +kubebuilder:validation:XValidation:message="empty tag keys or values aren't supported",rule="self.all(k, k != '' && self[k] != '')"
	// +kubebuilder:validation:MaxProperties=20
	// +optional
	Tags map[string]string `json:"tags,omitempty"`
	// ID of one image, e.g. ami-0a1b2c.
	// +kubebuilder:validation:Pattern="ami-[0-9a-z]+"
	// +optional
	ID string `json:"id,omitempty"`
	// Name is the image's name (not its Name tag); wildcards allowed.
	// +optional
	Name string `json:"name,omitempty"`
	// Owner narrows name or tags to images of these owners: account ids,
	// self, amazon or aws-marketplace, comma-separated.
	// +optional
	Owner string `json:"owner,omitempty"`
	// SSMParameter names an SSM parameter (or its ARN) that holds an image
	// id, read with SSM GetParameter; the term's other fields are not
	// read.
	// +optional
	SSMParameter string `json:"ssmParameter,omitempty"`
}

// AMI families (spec.amiFamily).
const (
	AMIFamilyAL2          = "AL2"
	AMIFamilyAL2023       = "AL2023"
	AMIFamilyBottlerocket = "Bottlerocket"
	AMIFamilyCustom       = "Custom"
	AMIFamilyWindows2019  = "Windows2019"
	AMIFamilyWindows2022  = "Windows2022"
	AMIFamilyWindows2025  = "Windows2025"
)

// AliasVersionLatest is the alias version that follows new releases.
const AliasVersionLatest = "latest"

// aliasFamilies maps an alias's family to the AMI family it names.
var aliasFamilies = map[string]string{
	"al2":          AMIFamilyAL2,
	"al2023":       AMIFamilyAL2023,
	"bottlerocket": AMIFamilyBottlerocket,
	"windows2019":  AMIFamilyWindows2019,
	"windows2022":  AMIFamilyWindows2022,
	"windows2025":  AMIFamilyWindows2025,
}

// Alias is a parsed amiSelectorTerms alias.
type Alias struct {
	// Family is the AMI family the alias names, e.g. AL2023.
	Family string
	// Version is a release such as v20240625, or latest.
	Version string
}

// Alias returns the class's alias term, parsed, or nil if it has none.
// Validation guarantees a stored alias is well formed and the only term.
func (in *EC2NodeClass) Alias() *Alias {
	for _, t := range in.Spec.AMISelectorTerms {
		if t.Alias != "" {
			family, version, _ := strings.Cut(t.Alias, "@")
			return &Alias{Family: aliasFamilies[family], Version: version}
		}
	}
	return nil
}

// AMIFamily is the family that decides user data and default block
// devices: spec.amiFamily when set (which may be Custom next to an alias),
// else the alias's family.
func (in *EC2NodeClass) AMIFamily() string {
	if in.Spec.AMIFamily != nil {
		return *in.Spec.AMIFamily
	}
	if a := in.Alias(); a != nil {
		return a.Family
	}
	// Validation requires amiFamily or an alias; an object that skipped
	// it gets the family that assumes nothing about the image.
	return AMIFamilyCustom
}
