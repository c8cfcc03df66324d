package v1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BlockDeviceMapping is one volume attached to an instance.
type BlockDeviceMapping struct {
	// DeviceName is where the volume attaches, e.g. /dev/xvda.
	// +optional
	DeviceName *string `json:"deviceName,omitempty"`
	// EBS describes the volume. Its rules sit on this field, as the
	// reference's do: gofmt would rewrite a type comment's '' into a
	// typographic quote.
	// +kubebuilder:validation:XValidation:message="snapshotID or volumeSize must be defined",rule="has(self.snapshotID) || has(self.volumeSize)"
	// +kubebuilder:validation:XValidation:message="snapshotID must be set when volumeInitializationRate is set",rule="!has(self.volumeInitializationRate) || (has(self.snapshotID) && self.snapshotID != '')"
	// +optional
	EBS *BlockDevice `json:"ebs,omitempty"`
	// RootVolume marks the volume that holds the kubelet's root directory;
	// at most one mapping may.
	// +optional
	RootVolume bool `json:"rootVolume,omitempty"`
}

// BlockDevice is an EBS volume created at launch.
type BlockDevice struct {
	// DeleteOnTermination deletes the volume with the instance.
	// +optional
	DeleteOnTermination *bool `json:"deleteOnTermination,omitempty"`
	// Encrypted encrypts the volume; a volume from a snapshot takes the
	// snapshot's encryption.
	// +optional
	Encrypted *bool `json:"encrypted,omitempty"`
	// IOPS provisioned for gp3, io1 and io2 volumes.
	// +optional
	IOPS *int64 `json:"iops,omitempty"`
	// KMSKeyID is the customer-managed KMS key (id, alias or ARN) that
	// encrypts the volume.
	// +optional
	KMSKeyID *string `json:"kmsKeyID,omitempty"`
	// SnapshotID is the EBS snapshot the volume starts from.
	// +optional
	SnapshotID *string `json:"snapshotID,omitempty"`
	// Throughput in MiB/s for gp3 volumes (125 to 1000).
	// +optional
	Throughput *int64 `json:"throughput,omitempty"`
	// VolumeInitializationRate in MiB/s at which a volume from a snapshot
	// is filled; only with snapshotID.
	// +kubebuilder:validation:Minimum=100
	// +kubebuilder:validation:Maximum=300
	// +optional
	VolumeInitializationRate *int32 `json:"volumeInitializationRate,omitempty"`
	// VolumeSize in Gi, G, Ti or T, at most 64T; snapshotID or volumeSize
	// is required.
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^((?:[1-9][0-9]{0,3}|[1-4][0-9]{4}|[5][0-8][0-9]{3}|59000)Gi|(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|[6][0-3][0-9]{3}|64000)G|([1-9]||[1-5][0-7]|58)Ti|([1-9]||[1-5][0-9]|6[0-3]|64)T)$`
	// +optional
	VolumeSize *resource.Quantity `json:"volumeSize,omitempty" hash:"string"`
	// VolumeType is the EBS volume type.
	// +kubebuilder:validation:Enum={standard,io1,io2,gp2,sc1,st1,gp3}
	// +optional
	VolumeType *string `json:"volumeType,omitempty"`
}

// InstanceStorePolicy is what to do with an instance's local NVMe disks.
// +kubebuilder:validation:Enum={RAID0}
type InstanceStorePolicy string

// InstanceStorePolicyRAID0 stripes all local NVMe disks into one array for
// the kubelet and container runtime, as the node's ephemeral storage.
const InstanceStorePolicyRAID0 = InstanceStorePolicy("RAID0")

// MetadataOptions expose the instance metadata service (IMDS) to the node.
// Each field defaults on its own, so setting one keeps the others safe.
type MetadataOptions struct {
	// HTTPEndpoint turns the metadata endpoint on or off.
	// +kubebuilder:default=enabled
	// +kubebuilder:validation:Enum={enabled,disabled}
	// +optional
	HTTPEndpoint *string `json:"httpEndpoint,omitempty"`
	// HTTPProtocolIPv6 turns the endpoint's IPv6 address on or off.
	// +kubebuilder:default=disabled
	// +kubebuilder:validation:Enum={enabled,disabled}
	// +optional
	HTTPProtocolIPv6 *string `json:"httpProtocolIPv6,omitempty"`
	// HTTPPutResponseHopLimit is how many network hops a metadata token
	// travels; 1 keeps it from pods on their own network namespace.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	// +optional
	HTTPPutResponseHopLimit *int64 `json:"httpPutResponseHopLimit,omitempty"`
	// HTTPTokens is whether requests need a session token (IMDSv2,
	// required) or may go without (optional).
	// +kubebuilder:default=required
	// +kubebuilder:validation:Enum={required,optional}
	// +optional
	HTTPTokens *string `json:"httpTokens,omitempty"`
}

// KubeletConfiguration is the subset of the upstream kubelet configuration
// (k8s.io/kubelet/config/v1beta1) that an EC2NodeClass may set, with the
// upstream names.
//
// +kubebuilder:validation:XValidation:message="imageGCHighThresholdPercent must be greater than imageGCLowThresholdPercent",rule="has(self.imageGCHighThresholdPercent) && has(self.imageGCLowThresholdPercent) ?  self.imageGCHighThresholdPercent > self.imageGCLowThresholdPercent  : true"
// +kubebuilder:validation:XValidation:message="evictionSoft OwnerKey does not have a matching evictionSoftGracePeriod",rule="has(self.evictionSoft) ? self.evictionSoft.all(e, (e in self.evictionSoftGracePeriod)):true"
// +kubebuilder:validation:XValidation:message="evictionSoftGracePeriod OwnerKey does not have a matching evictionSoft",rule="has(self.evictionSoftGracePeriod) ? self.evictionSoftGracePeriod.all(e, (e in self.evictionSoft)):true"
type KubeletConfiguration struct {
	// ClusterDNS are the cluster DNS server addresses.
	// +optional
	ClusterDNS []string `json:"clusterDNS,omitempty"`
	// MaxPods caps the pods on a node.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxPods *int32 `json:"maxPods,omitempty"`
	// PodsPerCore caps the pods per CPU core; maxPods still applies.
	// +kubebuilder:validation:Minimum=0
	// +optional
	PodsPerCore *int32 `json:"podsPerCore,omitempty"`
	// SystemReserved is held back for the OS and kernel.
	// +kubebuilder:validation:XValidation:message="valid keys for systemReserved are ['cpu','memory','ephemeral-storage','pid']",rule="self.all(x, x=='cpu' || x=='memory' || x=='ephemeral-storage' || x=='pid')"
	// +kubebuilder:validation:XValidation:message="systemReserved value cannot be a negative resource quantity",rule="self.all(x, !self[x].startsWith('-'))"
	// +optional
	SystemReserved map[string]Quantity `json:"systemReserved,omitempty"`
	// KubeReserved is held back for the kubelet and container runtime.
	// +kubebuilder:validation:XValidation:message="valid keys for kubeReserved are ['cpu','memory','ephemeral-storage','pid']",rule="self.all(x, x=='cpu' || x=='memory' || x=='ephemeral-storage' || x=='pid')"
	// +kubebuilder:validation:XValidation:message="kubeReserved value cannot be a negative resource quantity",rule="self.all(x, !self[x].startsWith('-'))"
	// +optional
	KubeReserved map[string]Quantity `json:"kubeReserved,omitempty"`
	// EvictionHard are the signals' thresholds at which pods are evicted
	// at once.
	// +kubebuilder:validation:XValidation:message="valid keys for evictionHard are ['memory.available','nodefs.available','nodefs.inodesFree','imagefs.available','imagefs.inodesFree','pid.available']",rule="self.all(x, x in ['memory.available','nodefs.available','nodefs.inodesFree','imagefs.available','imagefs.inodesFree','pid.available'])"
	// +optional
	EvictionHard map[string]EvictionThreshold `json:"evictionHard,omitempty"`
	// EvictionSoft are the signals' thresholds at which pods are evicted
	// after the signal's grace period; each needs one.
	// +kubebuilder:validation:XValidation:message="valid keys for evictionSoft are ['memory.available','nodefs.available','nodefs.inodesFree','imagefs.available','imagefs.inodesFree','pid.available']",rule="self.all(x, x in ['memory.available','nodefs.available','nodefs.inodesFree','imagefs.available','imagefs.inodesFree','pid.available'])"
	// +optional
	EvictionSoft map[string]EvictionThreshold `json:"evictionSoft,omitempty"`
	// EvictionSoftGracePeriod is how long each soft signal must hold
	// before pods are evicted.
	// +kubebuilder:validation:XValidation:message="valid keys for evictionSoftGracePeriod are ['memory.available','nodefs.available','nodefs.inodesFree','imagefs.available','imagefs.inodesFree','pid.available']",rule="self.all(x, x in ['memory.available','nodefs.available','nodefs.inodesFree','imagefs.available','imagefs.inodesFree','pid.available'])"
	// +optional
	EvictionSoftGracePeriod map[string]metav1.Duration `json:"evictionSoftGracePeriod,omitempty"`
	// EvictionMaxPodGracePeriod caps, in seconds, the grace period of pods
	// evicted for a soft threshold.
	// +optional
	EvictionMaxPodGracePeriod *int32 `json:"evictionMaxPodGracePeriod,omitempty"`
	// ImageGCHighThresholdPercent is the disk usage at which image garbage
	// collection always runs; above the low threshold.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	ImageGCHighThresholdPercent *int32 `json:"imageGCHighThresholdPercent,omitempty"`
	// ImageGCLowThresholdPercent is the disk usage image garbage collection
	// brings the disk down to.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	ImageGCLowThresholdPercent *int32 `json:"imageGCLowThresholdPercent,omitempty"`
	// CPUCFSQuota enforces CPU limits with CFS quota.
	// +optional
	CPUCFSQuota *bool `json:"cpuCFSQuota,omitempty"`
}

// Quantity and EvictionThreshold are named types so that the schema checks
// the syntax of every map value, as the reference's CRD does.

// Quantity is a resource quantity, e.g. 100m or 1Gi.
// +kubebuilder:validation:Pattern=`^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$`
type Quantity string

// EvictionThreshold is a percentage (e.g. 10%) or a resource quantity
// (e.g. 500Mi).
// +kubebuilder:validation:Pattern=`^((\d{1,2}(\.\d{1,2})?|100(\.0{1,2})?)%||(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?)$`
type EvictionThreshold string

// InterfaceType is the kind of a network interface, as EC2 names it.
type InterfaceType string

// Network interface types.
const (
	// InterfaceTypeInterface is an ENA interface (with EFA when the type
	// supports it and the interface is not the primary one).
	InterfaceTypeInterface = InterfaceType("interface")
	// InterfaceTypeEFAOnly is an EFA interface without IP addresses.
	InterfaceTypeEFAOnly = InterfaceType("efa-only")
)

// NetworkInterface is one network interface attached at launch.
type NetworkInterface struct {
	// NetworkCardIndex is the network card the interface is on.
	// +kubebuilder:validation:Minimum=0
	NetworkCardIndex int32 `json:"networkCardIndex"`
	// DeviceIndex is the interface's device index on the instance.
	// +kubebuilder:validation:Minimum=0
	DeviceIndex int32 `json:"deviceIndex"`
	// InterfaceType is interface or efa-only.
	// +kubebuilder:validation:Enum={interface,efa-only}
	InterfaceType InterfaceType `json:"interfaceType"`
}

// ConnectionTracking are idle connection tracking timeouts, in seconds;
// unset ones keep EC2's defaults. They need Nitro instance types.
// +kubebuilder:validation:XValidation:message="at least one of tcpEstablishedTimeout, udpStreamTimeout, or udpTimeout must be set",rule="has(self.tcpEstablishedTimeout) || has(self.udpStreamTimeout) || has(self.udpTimeout)"
type ConnectionTracking struct {
	// TCPEstablishedTimeout is for idle established TCP connections.
	// +kubebuilder:validation:Minimum=60
	// +kubebuilder:validation:Maximum=432000
	// +optional
	TCPEstablishedTimeout *int32 `json:"tcpEstablishedTimeout,omitempty"`
	// UDPStreamTimeout is for idle UDP flows that saw more than one
	// request-response.
	// +kubebuilder:validation:Minimum=60
	// +kubebuilder:validation:Maximum=180
	// +optional
	UDPStreamTimeout *int32 `json:"udpStreamTimeout,omitempty"`
	// UDPTimeout is for idle UDP flows seen in one direction or with a
	// single request-response.
	// +kubebuilder:validation:Minimum=30
	// +kubebuilder:validation:Maximum=60
	// +optional
	UDPTimeout *int32 `json:"udpTimeout,omitempty"`
}

// CPUOptions are an instance's CPU options.
type CPUOptions struct {
	// NestedVirtualization turns nested virtualization on or off; on,
	// only instance types that support it are launched.
	// +kubebuilder:validation:Enum={enabled,disabled}
	// +optional
	NestedVirtualization *string `json:"nestedVirtualization,omitempty"`
}
