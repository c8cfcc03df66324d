package aws

import (
	"encoding/base64"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	v1 "github.com/capstan-dev/capstan/api/v1"
)

func TestUserData(t *testing.T) {
	b := Bootstrap{Endpoint: "https://api.example", CABundle: "Q0E=", ServiceCIDR: "10.100.0.0/16"}
	nc := &v1.NodeClaim{}
	nc.Labels = map[string]string{v1.NodePoolLabelKey: "web"}
	nc.Spec.Taints = []corev1.Taint{{Key: "team", Value: "a", Effect: corev1.TaintEffectNoSchedule}}
	nc.Spec.StartupTaints = []corev1.Taint{{Key: "cni", Effect: corev1.TaintEffectNoSchedule}}
	class := func(family string, own *string, mods ...func(*awsv1.EC2NodeClass)) *awsv1.EC2NodeClass {
		c := &awsv1.EC2NodeClass{}
		c.Spec.AMIFamily = ptr.To(family)
		c.Spec.UserData = own
		for _, m := range mods {
			m(c)
		}
		return c
	}
	taints := "karpenter.sh/unregistered:NoExecute,team=a:NoSchedule,cni:NoSchedule"
	cases := []struct {
		name    string
		class   *awsv1.EC2NodeClass
		want    []string
		notWant []string
		err     string
	}{
		{"AL2023: a NodeConfig joining the cluster", class(awsv1.AMIFamilyAL2023, nil, func(c *awsv1.EC2NodeClass) {
			c.Spec.Kubelet = &awsv1.KubeletConfiguration{MaxPods: ptr.To[int32](42)}
		}), []string{"Content-Type: multipart/mixed; boundary=\"//\"", "kind: NodeConfig", "name: prod", "apiServerEndpoint: https://api.example",
			"certificateAuthority: Q0E=", "cidr: 10.100.0.0/16", "maxPods: 42", "--node-labels=karpenter.sh/nodepool=web", "--register-with-taints=" + taints, "--//--"}, nil, ""},
		{"AL2023: the user's script first", class(awsv1.AMIFamilyAL2023, ptr.To("#!/bin/bash\necho hi\n")),
			[]string{"Content-Type: text/x-shellscript", "echo hi", "kind: NodeConfig"}, nil, ""},
		{"AL2023: the user's MIME parts kept", class(awsv1.AMIFamilyAL2023, ptr.To("MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"BOUNDARY\"\n\n--BOUNDARY\nContent-Type: text/x-shellscript\n\necho mine\n--BOUNDARY--\n")),
			[]string{"Content-Type: text/x-shellscript\n\necho mine", "kind: NodeConfig"}, []string{"BOUNDARY"}, ""},
		{"AL2: bootstrap.sh after the user's script", class(awsv1.AMIFamilyAL2, ptr.To("#!/bin/bash\necho hi")),
			[]string{"echo hi\n/etc/eks/bootstrap.sh 'prod' --apiserver-endpoint 'https://api.example' --b64-cluster-ca 'Q0E='", "--register-with-taints=" + taints}, nil, ""},
		{"Bottlerocket: TOML settings", class(awsv1.AMIFamilyBottlerocket, nil),
			[]string{"[settings.kubernetes]", `cluster-name = "prod"`, `"karpenter.sh/nodepool" = "web"`, `"karpenter.sh/unregistered" = ["NoExecute"]`, `"team" = ["a:NoSchedule"]`}, nil, ""},
		{"Bottlerocket with the user's TOML: not yet", class(awsv1.AMIFamilyBottlerocket, ptr.To("[settings]")), nil, nil, "not supported yet"},
		{"Custom: the user's alone", class(awsv1.AMIFamilyCustom, ptr.To("anything")), []string{"anything"}, []string{"NodeConfig", "bootstrap"}, ""},
		{"Windows: not yet", class(awsv1.AMIFamilyWindows2022, nil), nil, nil, "Windows2022 is not supported yet"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := userData(b, "prod", nc, tc.class)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			raw, err := base64.StdEncoding.DecodeString(got)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(raw), w) {
					t.Errorf("user data lacks %q:\n%s", w, raw)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(string(raw), w) {
					t.Errorf("user data has %q:\n%s", w, raw)
				}
			}
		})
	}
}
