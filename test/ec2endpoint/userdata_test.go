package ec2endpoint_test

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/test/ec2endpoint"
)

// nodeConfig is a NodeConfig joining cluster, with the service CIDR the
// endpoint gives its cluster by default.
func nodeConfig(cluster string) string {
	return "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  cluster:\n    name: " + cluster +
		"\n    apiServerEndpoint: https://" + cluster + ".eks.test\n    certificateAuthority: Q0E=\n    cidr: 172.20.0.0/16\n"
}

// nodeConfigUserData is nodeConfig(cluster) as UserData, base64.
func nodeConfigUserData(cluster string) string {
	return base64.StdEncoding.EncodeToString([]byte(nodeConfig(cluster)))
}

// mimeDoc is a MIME multi-part document of parts (Content-Type, body).
func mimeDoc(parts ...[2]string) string {
	var b strings.Builder
	b.WriteString("MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"//\"\n\n")
	for _, p := range parts {
		b.WriteString("--//\nContent-Type: " + p[0] + "\n\n" + p[1] + "\n")
	}
	b.WriteString("--//--\n")
	return b.String()
}

// What nodeadm accepts and refuses (amazon-eks-ami
// nodeadm/internal/configprovider/userdata.go, internal/api/validation.go),
// and the endpoint's stricter refusal of unknown fields.
func TestNodeadmCluster(t *testing.T) {
	without := func(field string) string {
		var lines []string
		for _, l := range strings.Split(nodeConfig("c"), "\n") {
			if !strings.HasPrefix(strings.TrimSpace(l), field+":") {
				lines = append(lines, l)
			}
		}
		return strings.Join(lines, "\n")
	}
	cases := []struct {
		name, doc, err string
	}{
		{"a bare NodeConfig", nodeConfig("c"), ""},
		{"MIME: a script, then the NodeConfig", mimeDoc([2]string{"text/x-shellscript", "#!/bin/bash\necho hi"}, [2]string{"application/node.eks.aws", nodeConfig("c")}), ""},
		{"MIME: a later NodeConfig completes an earlier one", mimeDoc([2]string{"application/node.eks.aws", without("cidr")}, [2]string{"application/node.eks.aws", "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  cluster:\n    cidr: 10.100.0.0/16\n"}), ""},
		{"no name", without("name"), "Name is missing"},
		{"no endpoint", without("apiServerEndpoint"), "Apiserver endpoint is missing"},
		{"no CA", without("certificateAuthority"), "Certificate authority is missing"},
		{"no CIDR", without("cidr"), "CIDR is missing"},
		{"a shell script", "#!/bin/bash\necho hi\n", "decoding"},
		{"MIME without a NodeConfig", mimeDoc([2]string{"text/x-shellscript", "#!/bin/bash"}), "could not find NodeConfig"},
		{"MIME with a broken part", "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"//\"\n\n--//\nContent-Type: application/node.eks.aws\n\n" + nodeConfig("c"), "reading a MIME part"},
		{"an unknown field", nodeConfig("c") + "  kubelt: {}\n", "unknown field"},
		{"an unknown kubelet key", nodeConfig("c") + "  kubelet:\n    config:\n      maxPod: 3\n", "KubeletConfiguration"},
		{"another kind", strings.Replace(nodeConfig("c"), "NodeConfig", "NodeConfiguration", 1), "is not a node.eks.aws/v1alpha1 NodeConfig"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ec2endpoint.NodeadmCluster([]byte(tc.doc))
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("error %v, want %q", err, tc.err)
			}
		})
	}
}

// What Bottlerocket's settings model accepts and refuses for the keys
// the endpoint models (the rules' sources: bottlerocket.go).
func TestBottlerocketKubernetes(t *testing.T) {
	valid := "[settings.kubernetes]\ncluster-name = \"c\"\napi-server = \"https://c.eks.test\"\ncluster-certificate = \"Q0E=\"\ncluster-dns-ip = \"172.20.0.10\"\nmax-pods = 29\n"
	cases := []struct {
		name, doc, err string
	}{
		{"valid", valid, ""},
		{"taints value:Effect and :Effect", valid + "[settings.kubernetes.node-taints]\n\"karpenter.sh/unregistered\" = [\":NoExecute\"]\nteam = [\"a:NoSchedule\", \"b:NoExecute\"]\n", ""},
		{"a taint without its colon", valid + "[settings.kubernetes.node-taints]\n\"karpenter.sh/unregistered\" = [\"NoExecute\"]\n", "is not a taint value"},
		{"a taint value ending in -", valid + "[settings.kubernetes.node-taints]\nteam = [\"a-:NoSchedule\"]\n", "is not a taint value"},
		{"labels", valid + "[settings.kubernetes.node-labels]\n\"karpenter.sh/nodepool\" = \"web\"\nempty = \"\"\n", ""},
		{"a bad label key", valid + "[settings.kubernetes.node-labels]\n\".bad\" = \"web\"\n", "is not a label key"},
		{"a bad label value", valid + "[settings.kubernetes.node-labels]\nteam = \"bad.\"\n", "is not a label value"},
		{"cluster DNS as a list", strings.Replace(valid, "\"172.20.0.10\"", "[\"172.20.0.10\", \"fd00::a\"]", 1), ""},
		{"cluster DNS not an IP", strings.Replace(valid, "172.20.0.10", "dns", 1), "is not an IP address"},
		{"max-pods negative", strings.Replace(valid, "29", "-1", 1), "unsigned 32-bit"},
		{"a CA not base64", strings.Replace(valid, "Q0E=", "not base64!", 1), "not valid base64"},
		{"an API server without a scheme", strings.Replace(valid, "https://c.eks.test", "c.eks.test", 1), ""},
		{"an API server not a URL", strings.Replace(valid, "https://c.eks.test", "how are you", 1), "is not a URL"},
		{"an empty cluster name", strings.Replace(valid, "\"c\"", "\"\"", 1), "is not a cluster name"},
		{"not TOML", "settings.kubernetes = [", "not TOML"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ec2endpoint.BottlerocketKubernetes([]byte(tc.doc))
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("error %v, want %q", err, tc.err)
			}
		})
	}
}

// An instance launched with user data its node refuses runs, but its
// Node never registers, and the endpoint says why; EC2's own refusal
// (not base64) is CreateLaunchTemplate's error.
func TestUserDataJoins(t *testing.T) {
	bottlerocket := "ami-00000000000000003" // bottlerocket-aws-k8s-1.37-x86_64, see synthesizeImages
	cases := []struct {
		name, image, userData, why string
	}{
		{"AL2023 joins", amiX86, nodeConfigUserData("test-cluster"), ""},
		{"AL2023 of another cluster", amiX86, nodeConfigUserData("other"), `cluster name "other" is not "test-cluster"`},
		{"AL2023 with another service CIDR", amiX86, base64.StdEncoding.EncodeToString([]byte(strings.Replace(nodeConfig("test-cluster"), "172.20.0.0/16", "10.100.0.0/16", 1))), "service CIDR"},
		{"AL2023 without user data", amiX86, "", "NodeConfig"},
		{"Bottlerocket joins", bottlerocket, base64.StdEncoding.EncodeToString([]byte("[settings.kubernetes]\ncluster-name = \"test-cluster\"\napi-server = \"https://x\"\ncluster-certificate = \"Q0E=\"\n")), ""},
		{"Bottlerocket with a taint it refuses", bottlerocket, base64.StdEncoding.EncodeToString([]byte("[settings.kubernetes]\ncluster-name = \"test-cluster\"\napi-server = \"https://x\"\ncluster-certificate = \"Q0E=\"\n[settings.kubernetes.node-taints]\na = [\"NoExecute\"]\n")), "is not a taint value"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, profile())
			lt := createTemplate(t, f, "user-data", func(d *ec2types.RequestLaunchTemplateData) {
				d.ImageId, d.UserData = aws.String(tc.image), aws.String(tc.userData)
			})
			out := launch(t, f, fleetInput(lt, v1.CapacityTypeOnDemand, override("m5.large", subnetA)))
			if len(out.Instances) != 1 {
				t.Fatalf("launched %v, errors %v", out.Instances, out.Errors)
			}
			id := out.Instances[0].InstanceIds[0]
			why := f.server.NotJoined()[id]
			if tc.why == "" && why != "" || tc.why != "" && !strings.Contains(why, tc.why) {
				t.Errorf("not joining because %q, want %q", why, tc.why)
			}
			f.clock.Step(time.Minute)
			if nodes := f.kubelet.Due(f.clock.Now()); (len(nodes) == 1) != (tc.why == "") {
				t.Errorf("registered nodes %d, want one only when the node joins", len(nodes))
			}
		})
	}
	f := newFixture(t, profile())
	_, err := f.client.CreateLaunchTemplate(context.Background(), &ec2.CreateLaunchTemplateInput{
		LaunchTemplateName: aws.String("not-base64"), LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String(amiX86), UserData: aws.String("#!/bin/bash")},
	})
	if code := apiCode(t, err); code != "InvalidUserData.Malformed" {
		t.Errorf("user data not base64: %q, want InvalidUserData.Malformed", code)
	}
}
