package v1_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	"github.com/capstan-dev/capstan/config/crd"
	"github.com/capstan-dev/capstan/pkg/test"
)

// env is the real kube-apiserver every test in this package validates
// against; one per package keeps the suite fast.
var env *test.Environment

func TestMain(m *testing.M) {
	os.Exit(test.MainWithEnvironment(m, func(e *test.Environment) { env = e }))
}

// validSpec is the smallest EC2NodeClass the reference's docs show: a role,
// the latest AL2023 image, and subnets and security groups by discovery
// tag. Every case below edits a copy of it.
const validSpec = `
role: KarpenterNodeRole-my-cluster
amiSelectorTerms: [{alias: al2023@latest}]
subnetSelectorTerms: [{tags: {karpenter.sh/discovery: my-cluster}}]
securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: my-cluster}}]
`

// nodeClass is an EC2NodeClass with validSpec merged with patch: patch's
// maps merge into the spec's, its lists and scalars replace, and a null
// removes the field.
func nodeClass(t *testing.T, patch string) *unstructured.Unstructured {
	t.Helper()
	spec := map[string]any{}
	if err := yaml.Unmarshal([]byte(validSpec), &spec); err != nil {
		t.Fatal(err)
	}
	p := map[string]any{}
	if err := yaml.Unmarshal([]byte(patch), &p); err != nil {
		t.Fatalf("patch %q: %v", patch, err)
	}
	merge(spec, p)
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(awsv1.SchemeGroupVersion.WithKind("EC2NodeClass"))
	u.SetName(test.RandomName("ec2nodeclass"))
	return u
}

func merge(dst, src map[string]any) {
	for k, v := range src {
		sub, isMap := v.(map[string]any)
		old, wasMap := dst[k].(map[string]any)
		switch {
		case v == nil:
			delete(dst, k)
		case isMap && wasMap:
			merge(old, sub)
		default:
			dst[k] = v
		}
	}
}

// repeat is a YAML flow list of n copies of item.
func repeat(item string, n int) string {
	items := make([]string, n)
	for i := range items {
		items[i] = item
	}
	return "[" + strings.Join(items, ", ") + "]"
}

// tags is a YAML flow map of n distinct tags.
func tags(n int) string {
	kv := make([]string, n)
	for i := range kv {
		kv[i] = fmt.Sprintf("k%d: v", i)
	}
	return "{" + strings.Join(kv, ", ") + "}"
}

type invalidCase struct {
	name, patch string
	// field is the path the server names; message the reference's text.
	field, message string
}

func invalidNodeClasses() []invalidCase {
	const (
		exactlyOne   = "must specify exactly one of ['role', 'instanceProfile']"
		noTagsOrVals = "empty tag keys or values aren't supported"
		shouldMatch  = "should match"
	)
	return []invalidCase{
		// Identity.
		{"role and instanceProfile", "{instanceProfile: KarpenterNodeInstanceProfile}", "spec", exactlyOne},
		{"neither role nor instanceProfile", "{role: null}", "spec", exactlyOne},
		{"empty role", "{role: ''}", "spec.role", "role cannot be empty"},
		{"empty instanceProfile", "{role: null, instanceProfile: ''}", "spec.instanceProfile", "instanceProfile cannot be empty"},

		// AMIs.
		{"no amiSelectorTerms", "{amiSelectorTerms: null}", "spec.amiSelectorTerms", "Required value"},
		{"empty amiSelectorTerms", "{amiSelectorTerms: []}", "spec.amiSelectorTerms", "should have at least 1 items"},
		{"31 amiSelectorTerms", "{amiFamily: AL2023, amiSelectorTerms: " + repeat("{name: my-ami}", 31) + "}", "spec.amiSelectorTerms", "must have at most 30 items"},
		{"empty ami term", "{amiFamily: AL2023, amiSelectorTerms: [{}]}", "spec.amiSelectorTerms",
			"expected at least one, got none, ['tags', 'id', 'name', 'alias', 'ssmParameter']"},
		{"owner alone", "{amiFamily: AL2023, amiSelectorTerms: [{owner: self}]}", "spec.amiSelectorTerms",
			"expected at least one, got none, ['tags', 'id', 'name', 'alias', 'ssmParameter']"},
		{"ami id with name", "{amiFamily: AL2023, amiSelectorTerms: [{id: ami-0a1b2c, name: my-ami}]}", "spec.amiSelectorTerms",
			"'id' is mutually exclusive, cannot be set with a combination of other fields in amiSelectorTerms"},
		{"ami id with owner in a second term", "{amiFamily: AL2023, amiSelectorTerms: [{name: my-ami}, {id: ami-0a1b2c, owner: self}]}", "spec.amiSelectorTerms",
			"'id' is mutually exclusive, cannot be set with a combination of other fields in amiSelectorTerms"},
		{"alias with owner", "{amiSelectorTerms: [{alias: al2023@latest, owner: amazon}]}", "spec.amiSelectorTerms",
			"'alias' is mutually exclusive, cannot be set with a combination of other fields in amiSelectorTerms"},
		{"alias with another term", "{amiSelectorTerms: [{alias: al2023@latest}, {tags: {team: ml}}]}", "spec.amiSelectorTerms",
			"'alias' is mutually exclusive, cannot be set with a combination of other amiSelectorTerms"},
		{"alias without version", "{amiSelectorTerms: [{alias: al2023}]}", "spec.amiSelectorTerms[0].alias",
			"'alias' is improperly formatted, must match the format 'family@version'"},
		{"alias of an unknown family", "{amiSelectorTerms: [{alias: ubuntu@latest}]}", "spec.amiSelectorTerms[0].alias",
			"family is not supported, must be one of the following: 'al2', 'al2023', 'bottlerocket', 'windows2019', 'windows2022', 'windows2025'"},
		{"windows alias pinned", "{amiSelectorTerms: [{alias: windows2022@v20240101}]}", "spec.amiSelectorTerms[0].alias",
			"windows families may only specify version 'latest'"},
		{"alias too long", "{amiSelectorTerms: [{alias: bottlerocket@v1.20.0-0123456789abcdef}]}", "spec.amiSelectorTerms[0].alias", "Too long"},
		{"malformed ami id", "{amiFamily: AL2023, amiSelectorTerms: [{id: image-1}]}", "spec.amiSelectorTerms[0].id", shouldMatch},
		{"ami tag without value", "{amiFamily: AL2023, amiSelectorTerms: [{tags: {team: ''}}]}", "spec.amiSelectorTerms[0].tags", noTagsOrVals},
		{"21 ami tags", "{amiFamily: AL2023, amiSelectorTerms: [{tags: " + tags(21) + "}]}", "spec.amiSelectorTerms[0].tags", "must have at most 20 items"},
		{"unknown amiFamily", "{amiFamily: Ubuntu}", "spec.amiFamily", `Unsupported value: "Ubuntu"`},
		{"no amiFamily without an alias", "{amiSelectorTerms: [{id: ami-0a1b2c}]}", "spec",
			"must specify amiFamily if amiSelectorTerms does not contain an alias"},
		{"amiFamily AL2023 with an al2 alias", "{amiFamily: AL2023, amiSelectorTerms: [{alias: al2@latest}]}", "spec",
			"if set, amiFamily must be 'AL2' or 'Custom' when using an AL2 alias"},
		{"amiFamily AL2 with an al2023 alias", "{amiFamily: AL2}", "spec",
			"if set, amiFamily must be 'AL2023' or 'Custom' when using an AL2023 alias"},
		{"amiFamily AL2023 with a bottlerocket alias", "{amiFamily: AL2023, amiSelectorTerms: [{alias: bottlerocket@latest}]}", "spec",
			"if set, amiFamily must be 'Bottlerocket' or 'Custom' when using a Bottlerocket alias"},
		{"amiFamily Windows2022 with a windows2019 alias", "{amiFamily: Windows2022, amiSelectorTerms: [{alias: windows2019@latest}]}", "spec",
			"if set, amiFamily must be 'Windows2019' or 'Custom' when using a Windows2019 alias"},
		{"amiFamily Windows2025 with a windows2022 alias", "{amiFamily: Windows2025, amiSelectorTerms: [{alias: windows2022@latest}]}", "spec",
			"if set, amiFamily must be 'Windows2022' or 'Custom' when using a Windows2022 alias"},
		{"amiFamily Windows2019 with a windows2025 alias", "{amiFamily: Windows2019, amiSelectorTerms: [{alias: windows2025@latest}]}", "spec",
			"if set, amiFamily must be 'Windows2025' or 'Custom' when using a Windows2025 alias"},

		// Subnets.
		{"no subnetSelectorTerms", "{subnetSelectorTerms: null}", "spec.subnetSelectorTerms", "Required value"},
		{"empty subnetSelectorTerms", "{subnetSelectorTerms: []}", "spec.subnetSelectorTerms", "subnetSelectorTerms cannot be empty"},
		{"31 subnetSelectorTerms", "{subnetSelectorTerms: " + repeat("{id: subnet-0a1}", 31) + "}", "spec.subnetSelectorTerms", "must have at most 30 items"},
		{"empty subnet term", "{subnetSelectorTerms: [{}]}", "spec.subnetSelectorTerms", "expected at least one, got none, ['tags', 'id']"},
		{"subnet id with tags", "{subnetSelectorTerms: [{id: subnet-0a1, tags: {team: ml}}]}", "spec.subnetSelectorTerms",
			"'id' is mutually exclusive, cannot be set with a combination of other fields in a subnet selector term"},
		{"malformed subnet id", "{subnetSelectorTerms: [{id: sn-0a1}]}", "spec.subnetSelectorTerms[0].id", shouldMatch},
		{"subnet tag with empty key", "{subnetSelectorTerms: [{tags: {team: ml}}, {tags: {'': ml}}]}", "spec.subnetSelectorTerms[1].tags", noTagsOrVals},
		{"21 subnet tags", "{subnetSelectorTerms: [{tags: " + tags(21) + "}]}", "spec.subnetSelectorTerms[0].tags", "must have at most 20 items"},

		// Security groups.
		{"no securityGroupSelectorTerms", "{securityGroupSelectorTerms: null}", "spec.securityGroupSelectorTerms", "Required value"},
		{"empty securityGroupSelectorTerms", "{securityGroupSelectorTerms: []}", "spec.securityGroupSelectorTerms", "securityGroupSelectorTerms cannot be empty"},
		{"31 securityGroupSelectorTerms", "{securityGroupSelectorTerms: " + repeat("{name: nodes}", 31) + "}", "spec.securityGroupSelectorTerms", "must have at most 30 items"},
		{"empty security group term", "{securityGroupSelectorTerms: [{}]}", "spec.securityGroupSelectorTerms",
			"expected at least one, got none, ['tags', 'id', 'name']"},
		{"security group id with name", "{securityGroupSelectorTerms: [{id: sg-0a1, name: nodes}]}", "spec.securityGroupSelectorTerms",
			"'id' is mutually exclusive, cannot be set with a combination of other fields in a security group selector term"},
		{"security group name with tags", "{securityGroupSelectorTerms: [{name: nodes, tags: {team: ml}}]}", "spec.securityGroupSelectorTerms",
			"'name' is mutually exclusive, cannot be set with a combination of other fields in a security group selector term"},
		{"malformed security group id", "{securityGroupSelectorTerms: [{id: group-0a1}]}", "spec.securityGroupSelectorTerms[0].id", shouldMatch},
		{"security group tag without value", "{securityGroupSelectorTerms: [{tags: {team: ''}}]}", "spec.securityGroupSelectorTerms[0].tags", noTagsOrVals},

		// Capacity reservations.
		{"empty capacity reservation term", "{capacityReservationSelectorTerms: [{}]}", "spec.capacityReservationSelectorTerms",
			"expected at least one, got none, ['tags', 'id', 'instanceMatchCriteria']"},
		{"ownerID alone", "{capacityReservationSelectorTerms: [{ownerID: '111122223333'}]}", "spec.capacityReservationSelectorTerms",
			"expected at least one, got none, ['tags', 'id', 'instanceMatchCriteria']"},
		{"reservation id with ownerID", "{capacityReservationSelectorTerms: [{id: cr-0a1, ownerID: '111122223333'}]}", "spec.capacityReservationSelectorTerms",
			"'id' is mutually exclusive, cannot be set along with other fields in a capacity reservation selector term"},
		{"reservation id with instanceMatchCriteria", "{capacityReservationSelectorTerms: [{id: cr-0a1, instanceMatchCriteria: open}]}", "spec.capacityReservationSelectorTerms",
			"'id' is mutually exclusive, cannot be set along with other fields in a capacity reservation selector term"},
		{"31 capacityReservationSelectorTerms", "{capacityReservationSelectorTerms: " + repeat("{id: cr-0a1}", 31) + "}", "spec.capacityReservationSelectorTerms", "must have at most 30 items"},
		{"malformed reservation id", "{capacityReservationSelectorTerms: [{id: cr-0A1}]}", "spec.capacityReservationSelectorTerms[0].id", shouldMatch},
		{"short ownerID", "{capacityReservationSelectorTerms: [{tags: {team: ml}, ownerID: '1234'}]}", "spec.capacityReservationSelectorTerms[0].ownerID", shouldMatch},
		{"unknown instanceMatchCriteria", "{capacityReservationSelectorTerms: [{instanceMatchCriteria: shared}]}", "spec.capacityReservationSelectorTerms[0].instanceMatchCriteria",
			`Unsupported value: "shared"`},
		{"reservation tag without value", "{capacityReservationSelectorTerms: [{tags: {team: ''}}]}", "spec.capacityReservationSelectorTerms[0].tags", noTagsOrVals},

		// Tags.
		{"empty tag key", "{tags: {'': x}}", "spec.tags", "empty tag keys aren't supported"},
		{"EKS cluster tag", "{tags: {'eks:eks-cluster-name': my-cluster}}", "spec.tags", "tag contains a restricted tag matching eks:eks-cluster-name"},
		{"cluster ownership tag", "{tags: {kubernetes.io/cluster/my-cluster: owned}}", "spec.tags", "tag contains a restricted tag matching kubernetes.io/cluster/"},
		{"nodepool tag", "{tags: {karpenter.sh/nodepool: default}}", "spec.tags", "tag contains a restricted tag matching karpenter.sh/nodepool"},
		{"nodeclaim tag", "{tags: {karpenter.sh/nodeclaim: default-x}}", "spec.tags", "tag contains a restricted tag matching karpenter.sh/nodeclaim"},
		{"nodeclass tag", "{tags: {karpenter.k8s.aws/ec2nodeclass: default}}", "spec.tags", "tag contains a restricted tag matching karpenter.k8s.aws/ec2nodeclass"},

		// Block devices.
		{"two root volumes", "{blockDeviceMappings: [{deviceName: /dev/xvda, rootVolume: true, ebs: {volumeSize: 100Gi}}, {deviceName: /dev/xvdb, rootVolume: true, ebs: {volumeSize: 100Gi}}]}",
			"spec.blockDeviceMappings", "must have only one blockDeviceMappings with rootVolume"},
		{"volume without size or snapshot", "{blockDeviceMappings: [{deviceName: /dev/xvda, ebs: {volumeType: gp3}}]}",
			"spec.blockDeviceMappings[0].ebs", "snapshotID or volumeSize must be defined"},
		{"initialization rate without snapshot", "{blockDeviceMappings: [{deviceName: /dev/xvda, ebs: {volumeSize: 100Gi, volumeInitializationRate: 200}}]}",
			"spec.blockDeviceMappings[0].ebs", "snapshotID must be set when volumeInitializationRate is set"},
		{"initialization rate with an empty snapshot", "{blockDeviceMappings: [{ebs: {snapshotID: '', volumeInitializationRate: 200}}]}",
			"spec.blockDeviceMappings[0].ebs", "snapshotID must be set when volumeInitializationRate is set"},
		{"initialization rate too low", "{blockDeviceMappings: [{ebs: {snapshotID: snap-0a1, volumeInitializationRate: 99}}]}",
			"spec.blockDeviceMappings[0].ebs.volumeInitializationRate", "should be greater than or equal to 100"},
		{"volume over 64T", "{blockDeviceMappings: [{ebs: {volumeSize: 65T}}]}", "spec.blockDeviceMappings[0].ebs.volumeSize", shouldMatch},
		{"volume of 0Gi", "{blockDeviceMappings: [{ebs: {volumeSize: 0Gi}}]}", "spec.blockDeviceMappings[0].ebs.volumeSize", shouldMatch},
		{"volume in Mi", "{blockDeviceMappings: [{ebs: {volumeSize: 100Mi}}]}", "spec.blockDeviceMappings[0].ebs.volumeSize", shouldMatch},
		{"unknown volume type", "{blockDeviceMappings: [{ebs: {volumeSize: 100Gi, volumeType: gp4}}]}", "spec.blockDeviceMappings[0].ebs.volumeType", `Unsupported value: "gp4"`},
		{"51 block devices", "{blockDeviceMappings: " + repeat("{ebs: {volumeSize: 1Gi}}", 51) + "}", "spec.blockDeviceMappings", "must have at most 50 items"},

		// Metadata options.
		{"unknown httpTokens", "{metadataOptions: {httpTokens: sometimes}}", "spec.metadataOptions.httpTokens", `Unsupported value: "sometimes"`},
		{"unknown httpEndpoint", "{metadataOptions: {httpEndpoint: 'on'}}", "spec.metadataOptions.httpEndpoint", `Unsupported value: "on"`},
		{"unknown httpProtocolIPv6", "{metadataOptions: {httpProtocolIPv6: 'yes'}}", "spec.metadataOptions.httpProtocolIPv6", `Unsupported value: "yes"`},
		{"hop limit 0", "{metadataOptions: {httpPutResponseHopLimit: 0}}", "spec.metadataOptions.httpPutResponseHopLimit", "should be greater than or equal to 1"},
		{"hop limit 65", "{metadataOptions: {httpPutResponseHopLimit: 65}}", "spec.metadataOptions.httpPutResponseHopLimit", "should be less than or equal to 64"},

		// Instance store.
		{"unknown instanceStorePolicy", "{instanceStorePolicy: RAID1}", "spec.instanceStorePolicy", `Unsupported value: "RAID1"`},

		// Kubelet.
		{"kubeReserved gpu", "{kubelet: {kubeReserved: {nvidia.com/gpu: '1'}}}", "spec.kubelet.kubeReserved",
			"valid keys for kubeReserved are ['cpu','memory','ephemeral-storage','pid']"},
		{"negative kubeReserved", "{kubelet: {kubeReserved: {cpu: '-1'}}}", "spec.kubelet.kubeReserved", "kubeReserved value cannot be a negative resource quantity"},
		{"kubeReserved not a quantity", "{kubelet: {kubeReserved: {memory: lots}}}", "spec.kubelet.kubeReserved.memory", shouldMatch},
		{"systemReserved gpu", "{kubelet: {systemReserved: {nvidia.com/gpu: '1'}}}", "spec.kubelet.systemReserved",
			"valid keys for systemReserved are ['cpu','memory','ephemeral-storage','pid']"},
		{"negative systemReserved", "{kubelet: {systemReserved: {memory: -1Gi}}}", "spec.kubelet.systemReserved", "systemReserved value cannot be a negative resource quantity"},
		{"evictionHard unknown signal", "{kubelet: {evictionHard: {memory.free: 5%}}}", "spec.kubelet.evictionHard",
			"valid keys for evictionHard are ['memory.available','nodefs.available','nodefs.inodesFree','imagefs.available','imagefs.inodesFree','pid.available']"},
		{"evictionHard over 100%", "{kubelet: {evictionHard: {memory.available: 110%}}}", "spec.kubelet.evictionHard.memory.available", shouldMatch},
		{"evictionSoft unknown signal", "{kubelet: {evictionSoft: {memory.free: 5%}, evictionSoftGracePeriod: {memory.free: 1m}}}", "spec.kubelet.evictionSoft",
			"valid keys for evictionSoft are ['memory.available','nodefs.available','nodefs.inodesFree','imagefs.available','imagefs.inodesFree','pid.available']"},
		{"evictionSoft not a quantity", "{kubelet: {evictionSoft: {memory.available: 5 percent}, evictionSoftGracePeriod: {memory.available: 1m}}}",
			"spec.kubelet.evictionSoft.memory.available", shouldMatch},
		{"evictionSoft without grace period", "{kubelet: {evictionSoft: {memory.available: 5%}}}", "spec.kubelet",
			"evictionSoft OwnerKey does not have a matching evictionSoftGracePeriod"},
		{"evictionSoft with another signal's grace period", "{kubelet: {evictionSoft: {memory.available: 5%}, evictionSoftGracePeriod: {nodefs.available: 1m}}}", "spec.kubelet",
			"evictionSoft OwnerKey does not have a matching evictionSoftGracePeriod"},
		{"grace period without evictionSoft", "{kubelet: {evictionSoftGracePeriod: {memory.available: 1m}}}", "spec.kubelet",
			"evictionSoftGracePeriod OwnerKey does not have a matching evictionSoft"},
		{"grace period unknown signal", "{kubelet: {evictionSoft: {memory.free: 5%}, evictionSoftGracePeriod: {memory.free: 1m}}}", "spec.kubelet.evictionSoftGracePeriod",
			"valid keys for evictionSoftGracePeriod are ['memory.available','nodefs.available','nodefs.inodesFree','imagefs.available','imagefs.inodesFree','pid.available']"},
		{"image GC high below low", "{kubelet: {imageGCHighThresholdPercent: 50, imageGCLowThresholdPercent: 60}}", "spec.kubelet",
			"imageGCHighThresholdPercent must be greater than imageGCLowThresholdPercent"},
		{"image GC high equal to low", "{kubelet: {imageGCHighThresholdPercent: 60, imageGCLowThresholdPercent: 60}}", "spec.kubelet",
			"imageGCHighThresholdPercent must be greater than imageGCLowThresholdPercent"},
		{"image GC over 100", "{kubelet: {imageGCHighThresholdPercent: 101}}", "spec.kubelet.imageGCHighThresholdPercent", "should be less than or equal to 100"},
		{"negative maxPods", "{kubelet: {maxPods: -1}}", "spec.kubelet.maxPods", "should be greater than or equal to 0"},
		{"placement group by nothing", "{placementGroupSelector: {}}", "spec.placementGroupSelector", "expected at least one, got none, ['name', 'id']"},
		{"placement group by name and id", "{placementGroupSelector: {name: training, id: pg-0a1}}", "spec.placementGroupSelector", "'name' and 'id' are mutually exclusive"},
		{"placement group id malformed", "{placementGroupSelector: {id: placement-1}}", "spec.placementGroupSelector.id", shouldMatch},
		{"negative ipPrefixCount", "{ipPrefixCount: -1}", "spec.ipPrefixCount", "should be greater than or equal to 0"},
		{"network interfaces without a primary", "{networkInterfaces: [{networkCardIndex: 0, deviceIndex: 0, interfaceType: efa-only}]}", "spec.networkInterfaces",
			"networkInterfaces must include a primary interface with interfaceType='interface'"},
		{"two EFA-only interfaces on one card", "{networkInterfaces: [{networkCardIndex: 0, deviceIndex: 0, interfaceType: interface}, {networkCardIndex: 1, deviceIndex: 1, interfaceType: efa-only}, {networkCardIndex: 1, deviceIndex: 2, interfaceType: efa-only}]}", "spec.networkInterfaces",
			"networkInterfaces must not have duplicate networkCardIndex and deviceIndex pairs, and can have at most one efa device per network card"},
		{"network interface type unknown", "{networkInterfaces: [{networkCardIndex: 0, deviceIndex: 0, interfaceType: trunk}]}", "spec.networkInterfaces[0].interfaceType", "Unsupported value"},
		{"connection tracking empty", "{connectionTracking: {}}", "spec.connectionTracking",
			"at least one of tcpEstablishedTimeout, udpStreamTimeout, or udpTimeout must be set"},
		{"udp timeout over 60", "{connectionTracking: {udpTimeout: 61}}", "spec.connectionTracking.udpTimeout", "should be less than or equal to 60"},
		{"nested virtualization unknown", "{cpuOptions: {nestedVirtualization: on}}", "spec.cpuOptions.nestedVirtualization", "Unsupported value"},
	}
}

func TestInvalidEC2NodeClassesAreRejected(t *testing.T) {
	ctx := context.Background()
	for _, tc := range invalidNodeClasses() {
		t.Run(tc.name, func(t *testing.T) {
			err := env.Client.Create(ctx, nodeClass(t, tc.patch))
			if err == nil {
				t.Fatalf("accepted; want rejection at %s: %s", tc.field, tc.message)
			}
			if !strings.Contains(err.Error(), tc.field+":") || !strings.Contains(err.Error(), tc.message) {
				t.Fatalf("error %q\ndoes not name field %q with %q", err, tc.field, tc.message)
			}
		})
	}
}

// Manifests the reference accepts, Capstan accepts too, including the
// leniencies of its rules.
func TestValidEC2NodeClassesAreAccepted(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ name, patch string }{
		{"role and alias", ""},
		{"instanceProfile and AMI id", "{role: null, instanceProfile: KarpenterNodeInstanceProfile, amiFamily: AL2023, amiSelectorTerms: [{id: ami-0a1b2c3d}]}"},
		{"alias with its own family", "{amiFamily: AL2023}"},
		{"alias with amiFamily Custom", "{amiFamily: Custom, amiSelectorTerms: [{alias: bottlerocket@v1.20.0}]}"},
		{"windows alias at latest", "{amiSelectorTerms: [{alias: windows2025@latest}]}"},
		{"ami terms by name, owner, tags and SSM parameter", "{amiFamily: AL2, amiSelectorTerms: [{name: 'amazon-eks-node-1.30-*', owner: amazon}, {tags: {team: ml}, owner: '111122223333'}, {ssmParameter: /my/ami}]}"},
		{"subnet and security group ids and names", "{subnetSelectorTerms: [{id: subnet-0a1}, {id: subnet-0b2}], securityGroupSelectorTerms: [{id: sg-0a1}, {name: eks-cluster-sg-my-cluster}]}"},
		// The reference refuses an id combined with other fields only
		// when every term does so (see SubnetSelectorTerms).
		{"one subnet term of two combines id and tags", "{subnetSelectorTerms: [{id: subnet-0a1, tags: {team: ml}}, {tags: {team: ml}}]}"},
		{"one security group term of two combines name and tags", "{securityGroupSelectorTerms: [{name: nodes, tags: {team: ml}}, {id: sg-0a1}]}"},
		{"one reservation term of two combines id and ownerID", "{capacityReservationSelectorTerms: [{id: cr-0a1, ownerID: '111122223333'}, {tags: {team: ml}}]}"},
		{"reservations by id, tags and criteria", "{capacityReservationSelectorTerms: [{id: cr-0a1b2c}, {tags: {team: ml}, ownerID: '111122223333', instanceMatchCriteria: targeted}, {instanceMatchCriteria: open}]}"},
		{"tags near the restricted ones", "{tags: {team: ml, kubernetes.io/role: node, karpenter.sh/team: ml, 'eks:nodegroup-name': x}}"},
		{"block devices at the limits", "{blockDeviceMappings: [{deviceName: /dev/xvda, rootVolume: true, ebs: {volumeSize: 64T, volumeType: io2, iops: 64000}}, {deviceName: /dev/xvdb, rootVolume: false, ebs: {volumeSize: 1Gi}}, {deviceName: /dev/xvdc, ebs: {snapshotID: snap-0a1, volumeInitializationRate: 300}}]}"},
		{"everything kubelet takes", "{kubelet: {clusterDNS: [10.0.0.10], maxPods: 110, podsPerCore: 10, kubeReserved: {cpu: 100m, memory: 1Gi, ephemeral-storage: 1Gi, pid: '100'}, systemReserved: {cpu: '0.5', memory: 512Mi}, evictionHard: {memory.available: 5%, nodefs.available: 10%, imagefs.inodesFree: '1000'}, evictionSoft: {memory.available: 500Mi}, evictionSoftGracePeriod: {memory.available: 1m30s}, evictionMaxPodGracePeriod: 60, imageGCHighThresholdPercent: 85, imageGCLowThresholdPercent: 80, cpuCFSQuota: true}}"},
		{"empty evictionSoft without grace period", "{kubelet: {evictionSoft: {}}}"},
		{"placement group, prefixes, EFA interfaces, connection tracking, CPU options", "{placementGroupSelector: {name: training}, ipPrefixCount: 2, networkInterfaces: [{networkCardIndex: 0, deviceIndex: 0, interfaceType: interface}, {networkCardIndex: 1, deviceIndex: 1, interfaceType: efa-only}, {networkCardIndex: 2, deviceIndex: 1, interfaceType: interface}], connectionTracking: {tcpEstablishedTimeout: 432000, udpTimeout: 30}, cpuOptions: {nestedVirtualization: enabled}}"},
		{"metadata, user data and the rest", "{metadataOptions: {httpTokens: optional, httpPutResponseHopLimit: 64}, userData: '#!/bin/bash\necho hi', associatePublicIPAddress: false, detailedMonitoring: true, instanceStorePolicy: RAID0, context: ctx-0a1}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := env.Client.Create(ctx, nodeClass(t, tc.patch)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Role is mutable in the reference (since v1.7), and a class may move
// between a role and its own instance profile.
func TestRoleAndInstanceProfileMayChange(t *testing.T) {
	ctx := context.Background()
	nc := nodeClass(t, "")
	if err := env.Client.Create(ctx, nc); err != nil {
		t.Fatal(err)
	}
	for _, patch := range []map[string]any{
		{"role": "KarpenterNodeRole-other"},
		{"role": nil, "instanceProfile": "KarpenterNodeInstanceProfile"},
		{"role": "KarpenterNodeRole-my-cluster", "instanceProfile": nil},
	} {
		merge(nc.Object["spec"].(map[string]any), patch)
		if err := env.Client.Update(ctx, nc); err != nil {
			t.Fatalf("update to %v: %v", patch, err)
		}
	}
}

func TestEveryCELRuleIsExercised(t *testing.T) {
	crds, err := crd.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range crds {
		if c.Spec.Group != awsv1.Group {
			continue
		}
		found = true
		for _, rule := range test.CELRules(c) {
			exercised := false
			for _, tc := range invalidNodeClasses() {
				exercised = exercised || rule.Message == tc.message
			}
			if !exercised {
				t.Errorf("%s: no test asserts the rule %q", c.Name, rule.Message)
			}
		}
	}
	if !found {
		t.Fatalf("no embedded CRD of group %s", awsv1.Group)
	}
}
