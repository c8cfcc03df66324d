package aws_test

import (
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	nodeadm "github.com/awslabs/amazon-eks-ami/nodeadm/api/v1alpha1"
	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	"github.com/capstan-dev/capstan/test/ec2endpoint"
)

// The user's Bottlerocket settings merged under the node's, as the
// reference merges them (bootstrap/bottlerocket.go): the cluster and
// max-pods overwritten, labels merged with Capstan's winning, taints
// replaced, every other setting kept.
func TestUserDataBottlerocketMergesTheUsers(t *testing.T) {
	own := `[settings.kubernetes]
cluster-name = "wrong"
max-pods = 5
image-gc-high-threshold-percent = "85"
[settings.kubernetes.node-labels]
team = "ml"
"karpenter.sh/nodepool" = "other"
[settings.kubernetes.node-taints]
dedicated = ["gpu:NoSchedule"]
[settings.host-containers.admin]
enabled = true
`
	doc, err := decoded(t, testClass(awsv1.AMIFamilyBottlerocket, ptr.To(own), nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ec2endpoint.BottlerocketKubernetes([]byte(doc)); err != nil {
		t.Fatalf("Bottlerocket refuses the settings: %v\n%s", err, doc)
	}
	var got map[string]any
	if _, err := toml.Decode(doc, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"settings": map[string]any{
		"kubernetes": map[string]any{
			"cluster-name": "prod", "api-server": "https://api.example", "cluster-certificate": "Q0E=", "cluster-dns-ip": "172.20.0.10",
			"max-pods": int64(42), "image-gc-high-threshold-percent": "85",
			"node-labels": map[string]any{"team": "ml", "karpenter.sh/nodepool": "web"},
			"node-taints": map[string]any{"karpenter.sh/unregistered": []any{":NoExecute"}, "team": []any{"a:NoSchedule"}, "cni": []any{":NoSchedule"}},
		},
		"host-containers": map[string]any{"admin": map[string]any{"enabled": true}},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("settings (-want +got):\n%s", diff)
	}
}

// instanceStorePolicy RAID0 in each family's user data, as the reference
// writes it: nodeadm's localStorage strategy, bootstrap.sh's
// --local-disks raid0, Bottlerocket's ephemeral-storage bootstrap
// command.
func TestUserDataRAID0(t *testing.T) {
	raid0 := func(family string) *awsv1.EC2NodeClass {
		c := testClass(family, nil, nil)
		c.Spec.InstanceStorePolicy = ptr.To(awsv1.InstanceStorePolicyRAID0)
		return c
	}

	doc, err := decoded(t, raid0(awsv1.AMIFamilyAL2023))
	if err != nil {
		t.Fatal(err)
	}
	parts := readMIME(t, doc)
	var cfg nodeadm.NodeConfig
	if err := yaml.Unmarshal([]byte(parts[len(parts)-1].Body), &cfg); err != nil {
		t.Fatal(err)
	}
	if got := cfg.Spec.Instance.LocalStorage.Strategy; got != nodeadm.LocalStorageRAID0 {
		t.Errorf("AL2023 local storage strategy %q, want RAID0", got)
	}

	doc, err = decoded(t, raid0(awsv1.AMIFamilyAL2))
	if err != nil {
		t.Fatal(err)
	}
	if parts := readMIME(t, doc); !strings.Contains(parts[len(parts)-1].Body, " --local-disks raid0\n") {
		t.Errorf("AL2 bootstrap without --local-disks raid0:\n%s", doc)
	}

	doc, err = decoded(t, raid0(awsv1.AMIFamilyBottlerocket))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Settings struct {
			BootstrapCommands map[string]struct {
				Commands  [][]string `toml:"commands"`
				Mode      string     `toml:"mode"`
				Essential bool       `toml:"essential"`
			} `toml:"bootstrap-commands"`
		} `toml:"settings"`
	}
	if _, err := toml.Decode(doc, &got); err != nil {
		t.Fatal(err)
	}
	cmd := got.Settings.BootstrapCommands["000-mount-instance-storage"]
	wantCommands := [][]string{{"apiclient", "ephemeral-storage", "init"},
		{"apiclient", "ephemeral-storage", "bind", "--dirs", "/var/lib/containerd", "/var/lib/kubelet", "/var/log/pods"}}
	if diff := cmp.Diff(wantCommands, cmd.Commands); diff != "" || cmd.Mode != "always" || !cmd.Essential {
		t.Errorf("Bottlerocket bootstrap command %+v (-want +got commands):\n%s", cmd, diff)
	}
}
