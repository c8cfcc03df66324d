package ec2endpoint_test

import (
	"encoding/base64"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// A launched instance's Node reports what its kubelet would: pods as the
// user data's maxPods, else the VPC CNI's limit on the default network
// card (p5.48xlarge: 2 interfaces × 49 + 2 = 100, the reference's
// zz_generated.vpclimits.go); ephemeral storage as the volume the
// kubelet's root directory is on (AL2023's /dev/xvda, Bottlerocket's
// /dev/xvdb; the image's 20 GiB when the template does not size it); and
// the extended resources of its accelerators' device plugins.
func TestNodeReportsTheKubelets(t *testing.T) {
	bottlerocket := "ami-00000000000000003"
	rocketUserData := func(extra string) string {
		return base64.StdEncoding.EncodeToString([]byte("[settings.kubernetes]\ncluster-name = \"test-cluster\"\napi-server = \"https://x\"\ncluster-certificate = \"Q0E=\"\n" + extra))
	}
	volume := func(device string, gib int32) ec2types.LaunchTemplateBlockDeviceMappingRequest {
		return ec2types.LaunchTemplateBlockDeviceMappingRequest{DeviceName: aws.String(device), Ebs: &ec2types.LaunchTemplateEbsBlockDeviceRequest{VolumeSize: aws.Int32(gib), VolumeType: ec2types.VolumeTypeGp3}}
	}
	cases := []struct {
		name, instanceType, image, userData string
		volumes                             []ec2types.LaunchTemplateBlockDeviceMappingRequest
		want                                map[corev1.ResourceName]string
	}{
		{"AL2023, the user data's maxPods, a 100 GiB root volume", "m5.large", amiX86, base64.StdEncoding.EncodeToString([]byte(nodeConfig("test-cluster") + "  kubelet:\n    config:\n      maxPods: 17\n")),
			[]ec2types.LaunchTemplateBlockDeviceMappingRequest{volume("/dev/xvda", 100)}, map[corev1.ResourceName]string{"pods": "17", "ephemeral-storage": "100Gi"}},
		{"no maxPods: the default card's limit", "p5.48xlarge", amiX86, nodeConfigUserData("test-cluster"), nil,
			map[corev1.ResourceName]string{"pods": "100", "ephemeral-storage": "20Gi", "nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "32"}},
		{"Neuron devices and cores", "inf2.24xlarge", amiX86, nodeConfigUserData("test-cluster"), nil,
			map[corev1.ResourceName]string{"pods": "737", "ephemeral-storage": "20Gi", "aws.amazon.com/neuron": "6", "aws.amazon.com/neuroncore": "12"}},
		{"AMD GPUs", "g4ad.16xlarge", amiX86, nodeConfigUserData("test-cluster"), nil,
			map[corev1.ResourceName]string{"pods": "234", "ephemeral-storage": "20Gi", "amd.com/gpu": "4"}},
		{"Habana Gaudi", "dl1.24xlarge", amiX86, nodeConfigUserData("test-cluster"), nil,
			map[corev1.ResourceName]string{"pods": "737", "ephemeral-storage": "20Gi", "habana.ai/gaudi": "8", "vpc.amazonaws.com/efa": "4"}},
		{"Bottlerocket: max-pods, the data volume", "m5.large", bottlerocket, rocketUserData("max-pods = 21\n"),
			[]ec2types.LaunchTemplateBlockDeviceMappingRequest{volume("/dev/xvda", 4), volume("/dev/xvdb", 60)}, map[corev1.ResourceName]string{"pods": "21", "ephemeral-storage": "60Gi"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, profile())
			lt := createTemplate(t, f, "node", func(d *ec2types.RequestLaunchTemplateData) {
				d.ImageId, d.UserData, d.BlockDeviceMappings = aws.String(tc.image), aws.String(tc.userData), tc.volumes
			})
			out := launch(t, f, fleetInput(lt, v1.CapacityTypeOnDemand, override(tc.instanceType, subnetA)))
			if len(out.Instances) != 1 {
				t.Fatalf("launched %v, errors %v", out.Instances, out.Errors)
			}
			f.clock.Step(time.Hour)
			nodes := f.kubelet.Due(f.clock.Now())
			if len(nodes) != 1 {
				t.Fatalf("%d nodes registered, want 1 (not joining: %v)", len(nodes), f.server.NotJoined())
			}
			got := map[corev1.ResourceName]string{}
			for name, q := range nodes[0].Status.Capacity {
				if _, ok := tc.want[name]; ok || name == "nvidia.com/gpu" || name == "amd.com/gpu" {
					got[name] = q.String()
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("capacity (-want +got):\n%s", diff)
			}
			for name, q := range nodes[0].Status.Allocatable {
				if c := nodes[0].Status.Capacity[name]; q.Cmp(c) > 0 {
					t.Errorf("allocatable %s %s above capacity %s", name, q.String(), c.String())
				}
			}
		})
	}
}
