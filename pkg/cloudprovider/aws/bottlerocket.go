package aws

import (
	"bytes"
	"fmt"

	"github.com/BurntSushi/toml"
	corev1 "k8s.io/api/core/v1"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
)

// bottlerocket is Bottlerocket's TOML settings: the user's own (the
// class's userData), merged under what the node needs, as the reference
// merges them (bootstrap/bottlerocket.go Script): the cluster, the
// cluster DNS address and maxPods overwrite the user's; the labels are
// merged into the user's node-labels, Capstan's winning; the taints
// replace the user's node-taints, each key's values as Bottlerocket's
// KubernetesTaintValue writes them: value:Effect, and :Effect without a
// value. With instanceStorePolicy RAID0 a bootstrap command makes the
// instance stores one array and binds the containerd, kubelet and pod log
// directories onto it (the reference's 000-mount-instance-storage). The
// setting names are Bottlerocket's settings model's
// (bottlerocket-settings-sdk bottlerocket-settings-models, kubernetes
// KubernetesSettingsV1; bootstrap-commands in bottlerocket-core-kit
// sources/bootstrap-commands). Unlike the reference, the user's other
// kubernetes settings are kept even when Capstan does not know them:
// Bottlerocket itself refuses what its model does not accept.
func bottlerocket(n nodeUserData, own string, labels map[string]string, taints []corev1.Taint, k awsv1.KubeletConfiguration, raid0 bool) (string, error) {
	doc := map[string]any{}
	if own != "" {
		if _, err := toml.Decode(own, &doc); err != nil {
			return "", fmt.Errorf("reading the userData's Bottlerocket settings, %w", err)
		}
	}
	settings, err := table(doc, "settings")
	if err != nil {
		return "", err
	}
	kube, err := table(settings, "kubernetes")
	if err != nil {
		return "", err
	}
	kube["cluster-name"], kube["api-server"], kube["cluster-certificate"] = n.cluster, n.bootstrap.Endpoint, n.bootstrap.CABundle
	if len(k.ClusterDNS) > 0 {
		kube["cluster-dns-ip"] = k.ClusterDNS[0]
	}
	if k.MaxPods != nil {
		kube["max-pods"] = int64(*k.MaxPods)
	}
	nodeLabels, err := table(kube, "node-labels")
	if err != nil {
		return "", err
	}
	for key, v := range labels {
		nodeLabels[key] = v
	}
	nodeTaints := map[string][]string{}
	for _, t := range taints {
		nodeTaints[t.Key] = append(nodeTaints[t.Key], t.Value+":"+string(t.Effect))
	}
	kube["node-taints"] = nodeTaints
	if raid0 {
		commands, err := table(settings, "bootstrap-commands")
		if err != nil {
			return "", err
		}
		commands["000-mount-instance-storage"] = map[string]any{
			"commands": [][]string{
				{"apiclient", "ephemeral-storage", "init"},
				{"apiclient", "ephemeral-storage", "bind", "--dirs", "/var/lib/containerd", "/var/lib/kubelet", "/var/log/pods"},
			},
			"mode":      "always",
			"essential": true,
		}
	}
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(doc); err != nil {
		return "", fmt.Errorf("writing the Bottlerocket settings, %w", err)
	}
	return buf.String(), nil
}

// table is parent's table under key, made when absent; a key that holds
// something else is the user's mistake.
func table(parent map[string]any, key string) (map[string]any, error) {
	v, ok := parent[key]
	if !ok {
		t := map[string]any{}
		parent[key] = t
		return t, nil
	}
	t, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("reading the userData's Bottlerocket settings, %s is not a table", key)
	}
	return t, nil
}
