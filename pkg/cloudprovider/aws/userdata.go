package aws

import (
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	v1 "github.com/capstan-dev/capstan/api/v1"
)

// Bootstrap is what nodes join: the cluster's API server, its CA bundle
// (base64 PEM, as kubeconfigs carry it) and the service CIDR.
type Bootstrap struct {
	Endpoint    string
	CABundle    string
	ServiceCIDR string
}

// UnregisteredTaint keeps pods off a node until Capstan has synced the
// NodeClaim's labels and taints onto it (the reference's
// karpenter.sh/unregistered).
var UnregisteredTaint = corev1.Taint{Key: "karpenter.sh/unregistered", Effect: corev1.TaintEffectNoExecute}

// userData is the launch template's user data (base64) joining a node of
// nc's NodePool to the cluster, for the NodeClass's AMI family, merged
// with the NodeClass's own userData: AL2023 (nodeadm NodeConfig with the
// NodeClass's whole kubelet configuration, MIME multi-part after the
// user's parts), AL2 (bootstrap.sh after the user's script; of the
// kubelet settings, maxPods), Bottlerocket (TOML settings with maxPods;
// the user's TOML is not merged yet) and Custom (the user's user data
// alone).
func userData(b Bootstrap, cluster string, nc *v1.NodeClaim, class *awsv1.EC2NodeClass) (string, error) {
	own := ""
	if class.Spec.UserData != nil {
		own = *class.Spec.UserData
	}
	labels := map[string]string{v1.NodePoolLabelKey: nc.Labels[v1.NodePoolLabelKey]}
	taints := append(append([]corev1.Taint{UnregisteredTaint}, nc.Spec.Taints...), nc.Spec.StartupTaints...)
	var k awsv1.KubeletConfiguration
	if class.Spec.Kubelet != nil {
		k = *class.Spec.Kubelet
	}
	var out string
	switch family := class.AMIFamily(); family {
	case awsv1.AMIFamilyCustom:
		out = own
	case awsv1.AMIFamilyAL2023:
		cfg, err := nodeConfig(b, cluster, labels, taints, k)
		if err != nil {
			return "", err
		}
		out = mime(own, cfg)
	case awsv1.AMIFamilyAL2:
		out = bootstrapScript(b, cluster, labels, taints, k, own)
	case awsv1.AMIFamilyBottlerocket:
		if own != "" {
			return "", errors.New("merging userData into Bottlerocket settings is not supported yet")
		}
		out = bottlerocket(b, cluster, labels, taints, k)
	default:
		return "", fmt.Errorf("AMI family %s is not supported yet", family)
	}
	return base64.StdEncoding.EncodeToString([]byte(out)), nil
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

// nodeConfig is AL2023's nodeadm NodeConfig.
func nodeConfig(b Bootstrap, cluster string, labels map[string]string, taints []corev1.Taint, k awsv1.KubeletConfiguration) (string, error) {
	config := map[string]any{}
	if k.MaxPods != nil {
		config["maxPods"] = *k.MaxPods
	}
	if k.PodsPerCore != nil {
		config["podsPerCore"] = *k.PodsPerCore
	}
	if len(k.ClusterDNS) > 0 {
		config["clusterDNS"] = k.ClusterDNS
	}
	if len(k.KubeReserved) > 0 {
		config["kubeReserved"] = k.KubeReserved
	}
	if len(k.SystemReserved) > 0 {
		config["systemReserved"] = k.SystemReserved
	}
	if len(k.EvictionHard) > 0 {
		config["evictionHard"] = k.EvictionHard
	}
	if len(k.EvictionSoft) > 0 {
		config["evictionSoft"] = k.EvictionSoft
		config["evictionSoftGracePeriod"] = k.EvictionSoftGracePeriod
	}
	if k.EvictionMaxPodGracePeriod != nil {
		config["evictionMaxPodGracePeriod"] = *k.EvictionMaxPodGracePeriod
	}
	if k.ImageGCHighThresholdPercent != nil {
		config["imageGCHighThresholdPercent"] = *k.ImageGCHighThresholdPercent
	}
	if k.ImageGCLowThresholdPercent != nil {
		config["imageGCLowThresholdPercent"] = *k.ImageGCLowThresholdPercent
	}
	if k.CPUCFSQuota != nil {
		config["cpuCFSQuota"] = *k.CPUCFSQuota
	}
	doc := map[string]any{
		"apiVersion": "node.eks.aws/v1alpha1", "kind": "NodeConfig",
		"spec": map[string]any{
			"cluster": map[string]any{"name": cluster, "apiServerEndpoint": b.Endpoint, "certificateAuthority": b.CABundle, "cidr": b.ServiceCIDR},
			"kubelet": map[string]any{"config": config, "flags": []string{"--node-labels=" + nodeLabels(labels), "--register-with-taints=" + nodeTaints(taints)}},
		},
	}
	raw, err := yaml.Marshal(doc)
	if err != nil {
		return "", fmt.Errorf("writing the nodeadm config, %w", err)
	}
	return string(raw), nil
}

const boundary = "//"

// mime is a MIME multi-part document: the user's user data (its parts
// when it is multi-part itself, else one part), then the NodeConfig.
func mime(own, nodeConfig string) string {
	var b strings.Builder
	b.WriteString("MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"" + boundary + "\"\n\n")
	part := func(contentType, body string) {
		b.WriteString("--" + boundary + "\nContent-Type: " + contentType + "\n\n" + strings.TrimRight(body, "\n") + "\n\n")
	}
	if own != "" {
		if parts, ok := mimeParts(own); ok {
			for _, p := range parts {
				b.WriteString("--" + boundary + "\n" + strings.TrimRight(p, "\n") + "\n\n")
			}
		} else {
			ct := "application/node.eks.aws"
			if strings.HasPrefix(own, "#!") {
				ct = "text/x-shellscript; charset=\"us-ascii\""
			}
			part(ct, own)
		}
	}
	part("application/node.eks.aws", nodeConfig)
	b.WriteString("--" + boundary + "--\n")
	return b.String()
}

// mimeParts are the parts (headers and body) of a MIME multi-part
// document; false when ud is not one.
func mimeParts(ud string) ([]string, bool) {
	const marker = "boundary=\""
	i := strings.Index(ud, marker)
	if !strings.HasPrefix(ud, "MIME-Version:") || i < 0 {
		return nil, false
	}
	rest := ud[i+len(marker):]
	end := strings.Index(rest, "\"")
	if end < 0 {
		return nil, false
	}
	delim := "--" + rest[:end]
	var parts []string
	for _, chunk := range strings.Split(ud, delim)[1:] {
		chunk = strings.TrimLeft(chunk, "\n")
		if strings.HasPrefix(chunk, "--") || strings.TrimSpace(chunk) == "" {
			continue
		}
		parts = append(parts, chunk)
	}
	return parts, true
}

// bootstrapScript is AL2's: the user's script, then bootstrap.sh.
func bootstrapScript(b Bootstrap, cluster string, labels map[string]string, taints []corev1.Taint, k awsv1.KubeletConfiguration, own string) string {
	args := "--node-labels=" + nodeLabels(labels) + " --register-with-taints=" + nodeTaints(taints)
	if k.MaxPods != nil {
		args += fmt.Sprintf(" --max-pods=%d", *k.MaxPods)
	}
	script := fmt.Sprintf("/etc/eks/bootstrap.sh '%s' --apiserver-endpoint '%s' --b64-cluster-ca '%s' --kubelet-extra-args '%s'\n", cluster, b.Endpoint, b.CABundle, args)
	if own == "" {
		return "#!/bin/bash -xe\n" + script
	}
	return strings.TrimRight(own, "\n") + "\n" + script
}

// bottlerocket is Bottlerocket's TOML settings.
func bottlerocket(b Bootstrap, cluster string, labels map[string]string, taints []corev1.Taint, k awsv1.KubeletConfiguration) string {
	var s strings.Builder
	fmt.Fprintf(&s, "[settings.kubernetes]\ncluster-name = %q\napi-server = %q\ncluster-certificate = %q\n", cluster, b.Endpoint, b.CABundle)
	if k.MaxPods != nil {
		fmt.Fprintf(&s, "max-pods = %d\n", *k.MaxPods)
	}
	s.WriteString("\n[settings.kubernetes.node-labels]\n")
	for _, key := range slices.Sorted(maps.Keys(labels)) {
		fmt.Fprintf(&s, "%q = %q\n", key, labels[key])
	}
	s.WriteString("\n[settings.kubernetes.node-taints]\n")
	byKey := map[string][]string{}
	for _, t := range taints {
		byKey[t.Key] = append(byKey[t.Key], strings.TrimPrefix(t.Value+":"+string(t.Effect), ":"))
	}
	for _, key := range slices.Sorted(maps.Keys(byKey)) {
		fmt.Fprintf(&s, "%q = [%s]\n", key, quoteAll(byKey[key]))
	}
	return s.String()
}

func quoteAll(values []string) string {
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(quoted, ", ")
}
