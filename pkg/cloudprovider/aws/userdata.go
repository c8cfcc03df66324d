package aws

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	nodeadmapi "github.com/awslabs/amazon-eks-ami/nodeadm/api"
	nodeadm "github.com/awslabs/amazon-eks-ami/nodeadm/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	v1 "github.com/capstan-dev/capstan/api/v1"
)

// UnregisteredTaint keeps pods off a node until Capstan has synced the
// NodeClaim's labels and taints onto it (the reference's
// karpenter.sh/unregistered).
var UnregisteredTaint = corev1.Taint{Key: "karpenter.sh/unregistered", Effect: corev1.TaintEffectNoExecute}

// Content types of the MIME parts: nodeadm reads the parts of its own
// media type (amazon-eks-ami nodeadm/internal/configprovider/userdata.go),
// cloud-init runs the shell scripts.
const (
	contentTypeNodeConfig = "application/" + nodeadmapi.GroupName
	contentTypeShell      = `text/x-shellscript; charset="us-ascii"`
)

// nodeUserData is what a launch template's user data says beyond the
// NodeClass: the cluster the node joins and the kubelet's maxPods, the
// pod limit Capstan computed for the template's instance types (the
// reference passes it always, so the node never falls back to the AMI's
// own table).
type nodeUserData struct {
	cluster   string
	bootstrap Bootstrap
	maxPods   int32
}

// userData is the launch template's user data (base64) joining a node of
// nc's NodePool to the cluster, for the NodeClass's AMI family, merged
// with the NodeClass's own userData, as the reference builds it
// (pkg/providers/amifamily/bootstrap): AL2023, a MIME multi-part document
// of the user's parts and a nodeadm NodeConfig; AL2, a MIME multi-part
// document of the user's parts and a bootstrap.sh script; Bottlerocket,
// the user's TOML settings merged under the node's; Custom, the user's
// user data alone. The bootstrap has what the family needs (Missing).
func userData(n nodeUserData, nc *v1.NodeClaim, class *awsv1.EC2NodeClass) (string, error) {
	own := ""
	if class.Spec.UserData != nil {
		own = *class.Spec.UserData
	}
	labels := map[string]string{v1.NodePoolLabelKey: nc.Labels[v1.NodePoolLabelKey]}
	taints := append(append([]corev1.Taint{UnregisteredTaint}, nc.Spec.Taints...), nc.Spec.StartupTaints...)
	k := kubeletConfig(class.Spec.Kubelet, n)
	raid0 := class.Spec.InstanceStorePolicy != nil && *class.Spec.InstanceStorePolicy == awsv1.InstanceStorePolicyRAID0
	var out string
	var err error
	switch family := class.AMIFamily(); family {
	case awsv1.AMIFamilyCustom:
		out = own
	case awsv1.AMIFamilyAL2023:
		var cfg string
		if cfg, err = nodeConfig(n, labels, taints, k, raid0); err == nil {
			out, err = mergeMIME(own, contentTypeNodeConfig, part{contentTypeNodeConfig, cfg})
		}
	case awsv1.AMIFamilyAL2:
		out, err = mergeMIME(own, contentTypeShell, part{contentTypeShell, bootstrapScript(n, labels, taints, k, raid0)})
	case awsv1.AMIFamilyBottlerocket:
		out, err = bottlerocket(n, own, labels, taints, k, raid0)
	default:
		return "", fmt.Errorf("AMI family %s is not supported yet", family)
	}
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString([]byte(out)), nil
}

// kubeletConfig is the NodeClass's kubelet configuration with what the
// reference always adds unless the NodeClass names its own (resolver.go
// resolveLaunchTemplates): maxPods, the template's instance types' pod
// limit, and clusterDNS from the cluster's kube-dns Service.
func kubeletConfig(spec *awsv1.KubeletConfiguration, n nodeUserData) awsv1.KubeletConfiguration {
	var k awsv1.KubeletConfiguration
	if spec != nil {
		k = *spec.DeepCopy()
	}
	if k.MaxPods == nil && n.maxPods > 0 {
		k.MaxPods = &n.maxPods
	}
	if len(k.ClusterDNS) == 0 && n.bootstrap.ClusterDNS != "" {
		k.ClusterDNS = []string{n.bootstrap.ClusterDNS}
	}
	return k
}

func nodeLabels(labels map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		parts = append(parts, k+"="+labels[k])
	}
	return strings.Join(parts, ",")
}

func nodeTaints(taints []corev1.Taint) string {
	parts := make([]string, 0, len(taints))
	for _, t := range taints {
		parts = append(parts, t.ToString())
	}
	return strings.Join(parts, ",")
}

// nodeConfig is AL2023's nodeadm NodeConfig, built with nodeadm's own
// types: the cluster's coordinates (the CA decoded: the type holds the
// bytes and marshals them base64 again), the kubelet configuration
// (KubeletConfiguration v1beta1 keys, which awsv1's JSON names are, plus
// registerWithTaints), the labels as a flag and, for instanceStorePolicy
// RAID0, the local storage strategy, as the reference writes it
// (bootstrap/nodeadm.go).
func nodeConfig(n nodeUserData, labels map[string]string, taints []corev1.Taint, k awsv1.KubeletConfiguration, raid0 bool) (string, error) {
	ca, err := base64.StdEncoding.DecodeString(n.bootstrap.CABundle)
	if err != nil {
		return "", fmt.Errorf("decoding the cluster's CA bundle, %w", err)
	}
	config, err := rawFields(k)
	if err != nil {
		return "", err
	}
	if config["registerWithTaints"], err = rawJSON(taints); err != nil {
		return "", err
	}
	cfg := nodeadm.NodeConfig{
		TypeMeta: metav1.TypeMeta{APIVersion: nodeadm.GroupVersion.String(), Kind: nodeadmapi.KindNodeConfig},
		Spec: nodeadm.NodeConfigSpec{
			Cluster: nodeadm.ClusterDetails{Name: n.cluster, APIServerEndpoint: n.bootstrap.Endpoint, CertificateAuthority: ca, CIDR: n.bootstrap.ServiceCIDR},
			Kubelet: nodeadm.KubeletOptions{Config: config, Flags: []string{"--node-labels=" + nodeLabels(labels)}},
		},
	}
	if raid0 {
		// nodeadm makes the instance stores one RAID0 array for the
		// kubelet and containerd (the reference's nodeadm.go).
		cfg.Spec.Instance.LocalStorage.Strategy = nodeadm.LocalStorageRAID0
	}
	raw, err := yaml.Marshal(cfg)
	if err != nil {
		return "", fmt.Errorf("writing the nodeadm config, %w", err)
	}
	return string(raw), nil
}

// rawFields are v's JSON fields, each as its own raw value.
func rawFields(v any) (map[string]runtime.RawExtension, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("writing the kubelet configuration, %w", err)
	}
	out := map[string]runtime.RawExtension{}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("splitting the kubelet configuration, %w", err)
	}
	return out, nil
}

func rawJSON(v any) (runtime.RawExtension, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return runtime.RawExtension{}, fmt.Errorf("writing %T, %w", v, err)
	}
	return runtime.RawExtension{Raw: raw}, nil
}

// bootstrapScript is AL2's bootstrap.sh call, with the arguments the
// reference passes (bootstrap/eksbootstrap.go): the cluster, its
// endpoint and CA, the cluster DNS address, and the kubelet's labels,
// taints and maxPods (--use-max-pods false keeps bootstrap.sh from
// writing its own), and --local-disks raid0 for instanceStorePolicy
// RAID0.
func bootstrapScript(n nodeUserData, labels map[string]string, taints []corev1.Taint, k awsv1.KubeletConfiguration, raid0 bool) string {
	var s strings.Builder
	fmt.Fprintf(&s, "#!/bin/bash -xe\n/etc/eks/bootstrap.sh '%s' --apiserver-endpoint '%s' --b64-cluster-ca '%s'", n.cluster, n.bootstrap.Endpoint, n.bootstrap.CABundle)
	if len(k.ClusterDNS) > 0 {
		fmt.Fprintf(&s, " --dns-cluster-ip '%s'", k.ClusterDNS[0])
	}
	args := "--node-labels=" + nodeLabels(labels) + " --register-with-taints=" + nodeTaints(taints)
	if k.MaxPods != nil {
		s.WriteString(" --use-max-pods false")
		args += fmt.Sprintf(" --max-pods=%d", *k.MaxPods)
	}
	fmt.Fprintf(&s, " --kubelet-extra-args '%s'", args)
	if raid0 {
		// bootstrap.sh's own RAID0 of the instance stores (the
		// reference's eksbootstrap.go).
		s.WriteString(" --local-disks raid0")
	}
	s.WriteString("\n")
	return s.String()
}
