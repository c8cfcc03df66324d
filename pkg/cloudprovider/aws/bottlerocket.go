package aws

import (
	"bytes"
	"fmt"
	"maps"

	"github.com/BurntSushi/toml"
	corev1 "k8s.io/api/core/v1"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
)

// bottlerocketSettings are the Bottlerocket settings Capstan writes, under
// the names of Bottlerocket's settings model (bottlerocket-settings-sdk
// bottlerocket-settings-models/settings-extensions/kubernetes/src/lib.rs,
// KubernetesSettingsV1).
type bottlerocketSettings struct {
	Settings struct {
		Kubernetes bottlerocketKubernetes `toml:"kubernetes"`
	} `toml:"settings"`
}

type bottlerocketKubernetes struct {
	ClusterName        string              `toml:"cluster-name"`
	APIServer          string              `toml:"api-server"`
	ClusterCertificate string              `toml:"cluster-certificate"`
	ClusterDNSIP       string              `toml:"cluster-dns-ip,omitempty"`
	MaxPods            int32               `toml:"max-pods,omitempty"`
	NodeLabels         map[string]string   `toml:"node-labels,omitempty"`
	NodeTaints         map[string][]string `toml:"node-taints,omitempty"`
}

// bottlerocket is Bottlerocket's TOML settings: the cluster, the cluster
// DNS address, maxPods, the labels, and the taints, each key's values as
// Bottlerocket's KubernetesTaintValue writes them: value:Effect, and
// :Effect without a value (the reference's bootstrap/bottlerocket.go).
func bottlerocket(n nodeUserData, labels map[string]string, taints []corev1.Taint, k awsv1.KubeletConfiguration) (string, error) {
	var s bottlerocketSettings
	kube := &s.Settings.Kubernetes
	kube.ClusterName, kube.APIServer, kube.ClusterCertificate = n.cluster, n.bootstrap.Endpoint, n.bootstrap.CABundle
	if len(k.ClusterDNS) > 0 {
		kube.ClusterDNSIP = k.ClusterDNS[0]
	}
	if k.MaxPods != nil {
		kube.MaxPods = *k.MaxPods
	}
	kube.NodeLabels = maps.Clone(labels)
	kube.NodeTaints = map[string][]string{}
	for _, t := range taints {
		kube.NodeTaints[t.Key] = append(kube.NodeTaints[t.Key], t.Value+":"+string(t.Effect))
	}
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(s); err != nil {
		return "", fmt.Errorf("writing the Bottlerocket settings, %w", err)
	}
	return buf.String(), nil
}
