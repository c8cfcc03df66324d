package aws_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	nodeadm "github.com/awslabs/amazon-eks-ami/nodeadm/api/v1alpha1"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/aws"
	"github.com/capstan-dev/capstan/test/ec2endpoint"
)

// The user data's cluster and the NodeClaim every case launches.
var (
	testBootstrap = aws.Bootstrap{Endpoint: "https://api.example", CABundle: base64.StdEncoding.EncodeToString([]byte("CA")), ServiceCIDR: "172.20.0.0/16", ClusterDNS: "172.20.0.10"}
	testClaim     = func() *v1.NodeClaim {
		nc := &v1.NodeClaim{}
		nc.Labels = map[string]string{v1.NodePoolLabelKey: "web"}
		nc.Spec.Taints = []corev1.Taint{{Key: "team", Value: "a", Effect: corev1.TaintEffectNoSchedule}}
		nc.Spec.StartupTaints = []corev1.Taint{{Key: "cni", Effect: corev1.TaintEffectNoSchedule}}
		return nc
	}()
	testTaints = append([]corev1.Taint{aws.UnregisteredTaint}, append(testClaim.Spec.Taints, testClaim.Spec.StartupTaints...)...)
)

func testClass(family string, own *string, kubelet *awsv1.KubeletConfiguration) *awsv1.EC2NodeClass {
	c := &awsv1.EC2NodeClass{}
	c.Spec.AMIFamily = ptr.To(family)
	c.Spec.UserData = own
	c.Spec.Kubelet = kubelet
	return c
}

// decoded is the base64 user data of class for testClaim, maxPods 42.
func decoded(t *testing.T, class *awsv1.EC2NodeClass) (string, error) {
	t.Helper()
	got, err := aws.UserData(testBootstrap, "prod", 42, testClaim, class)
	if err != nil {
		return "", err
	}
	raw, err := base64.StdEncoding.DecodeString(got)
	if err != nil {
		t.Fatalf("user data is not base64: %v", err)
	}
	return string(raw), nil
}

// mimePart is a part of a MIME document: its media type and body.
type mimePart struct{ MediaType, Body string }

// readMIME reads doc with mime/multipart as cloud-init and nodeadm do: a
// multipart/mixed document whose parts all sit inside its boundary, and
// nothing after the closing one.
func readMIME(t *testing.T, doc string) []mimePart {
	t.Helper()
	msg, err := mail.ReadMessage(strings.NewReader(doc))
	if err != nil {
		t.Fatalf("not a MIME document: %v\n%s", err, doc)
	}
	mediaType, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || mediaType != "multipart/mixed" {
		t.Fatalf("Content-Type %q (%v), want multipart/mixed", msg.Header.Get("Content-Type"), err)
	}
	closing := "--" + params["boundary"] + "--"
	if !strings.HasSuffix(strings.TrimRight(doc, "\r\n"), closing) {
		t.Errorf("content after the closing boundary %s:\n%s", closing, doc)
	}
	r := multipart.NewReader(msg.Body, params["boundary"])
	var parts []mimePart
	for {
		p, err := r.NextPart()
		if errors.Is(err, io.EOF) {
			return parts
		}
		if err != nil {
			t.Fatalf("reading a part: %v", err)
		}
		body, err := io.ReadAll(p)
		if err != nil {
			t.Fatal(err)
		}
		mt, _, err := mime.ParseMediaType(p.Header.Get("Content-Type"))
		if err != nil {
			t.Fatalf("part Content-Type %q: %v", p.Header.Get("Content-Type"), err)
		}
		parts = append(parts, mimePart{mt, string(body)})
	}
}

// AL2023: a MIME document whose NodeConfig part nodeadm accepts (read by
// the local endpoint's nodeadm reader, strict) with the cluster's
// coordinates and the kubelet settings the reference passes, after the
// user's own parts.
func TestUserDataAL2023(t *testing.T) {
	own := "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"BOUNDARY\"\n\n--BOUNDARY\nContent-Type: text/x-shellscript\n\necho mine\n--BOUNDARY--\n"
	userNodeConfig := "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    config:\n      shutdownGracePeriod: 30s\n"
	cases := []struct {
		name string
		own  *string
		kube *awsv1.KubeletConfiguration
		// wantParts are the media types before Capstan's NodeConfig and
		// wantOwn the first part's body.
		wantParts []string
		wantOwn   string
		wantDNS   []string
		wantPods  int32
	}{
		{"alone", nil, nil, nil, "", []string{"172.20.0.10"}, 42},
		{"the user's script first", ptr.To("#!/bin/bash\necho hi\n"), nil, []string{"text/x-shellscript"}, "#!/bin/bash\necho hi\n", []string{"172.20.0.10"}, 42},
		{"the user's NodeConfig first", ptr.To(userNodeConfig), nil, []string{"application/node.eks.aws"}, userNodeConfig, []string{"172.20.0.10"}, 42},
		{"the user's MIME parts kept", ptr.To(own), nil, []string{"text/x-shellscript"}, "echo mine", []string{"172.20.0.10"}, 42},
		{"the NodeClass's clusterDNS and maxPods win", nil, &awsv1.KubeletConfiguration{ClusterDNS: []string{"10.0.0.53"}, MaxPods: ptr.To[int32](7)}, nil, "", []string{"10.0.0.53"}, 7},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := decoded(t, testClass(awsv1.AMIFamilyAL2023, tc.own, tc.kube))
			if err != nil {
				t.Fatal(err)
			}
			cluster, err := ec2endpoint.NodeadmCluster([]byte(doc))
			if err != nil {
				t.Fatalf("nodeadm refuses the user data: %v\n%s", err, doc)
			}
			want := nodeadm.ClusterDetails{Name: "prod", APIServerEndpoint: testBootstrap.Endpoint, CertificateAuthority: []byte("CA"), CIDR: testBootstrap.ServiceCIDR}
			if diff := cmp.Diff(want, cluster); diff != "" {
				t.Errorf("cluster (-want +got):\n%s", diff)
			}
			parts := readMIME(t, doc)
			var types []string
			for _, p := range parts[:len(parts)-1] {
				types = append(types, p.MediaType)
			}
			if diff := cmp.Diff(tc.wantParts, types); diff != "" {
				t.Errorf("the user's parts (-want +got):\n%s", diff)
			}
			if tc.wantOwn != "" && parts[0].Body != tc.wantOwn {
				t.Errorf("the user's part is %q, want %q", parts[0].Body, tc.wantOwn)
			}
			last := parts[len(parts)-1]
			if last.MediaType != "application/node.eks.aws" {
				t.Fatalf("the last part is %s, want Capstan's NodeConfig", last.MediaType)
			}
			var cfg nodeadm.NodeConfig
			if err := yaml.UnmarshalStrict([]byte(last.Body), &cfg); err != nil {
				t.Fatal(err)
			}
			raw, err := json.Marshal(cfg.Spec.Kubelet.Config)
			if err != nil {
				t.Fatal(err)
			}
			var k kubeletv1beta1.KubeletConfiguration
			if err := yaml.UnmarshalStrict(raw, &k); err != nil {
				t.Fatalf("kubelet config: %v", err)
			}
			got := struct {
				DNS    []string
				Pods   int32
				Taints []corev1.Taint
				Flags  []string
			}{k.ClusterDNS, k.MaxPods, k.RegisterWithTaints, cfg.Spec.Kubelet.Flags}
			wantKubelet := struct {
				DNS    []string
				Pods   int32
				Taints []corev1.Taint
				Flags  []string
			}{tc.wantDNS, tc.wantPods, testTaints, []string{"--node-labels=karpenter.sh/nodepool=web"}}
			if diff := cmp.Diff(wantKubelet, got); diff != "" {
				t.Errorf("kubelet (-want +got):\n%s", diff)
			}
		})
	}
}

// AL2: a MIME document, the user's parts (a plain script as a part of
// its own) then bootstrap.sh with the reference's arguments, all inside
// the boundary.
func TestUserDataAL2(t *testing.T) {
	bootstrap := "#!/bin/bash -xe\n/etc/eks/bootstrap.sh 'prod' --apiserver-endpoint 'https://api.example' --b64-cluster-ca 'Q0E=' --dns-cluster-ip '172.20.0.10' --use-max-pods false" +
		" --kubelet-extra-args '--node-labels=karpenter.sh/nodepool=web --register-with-taints=karpenter.sh/unregistered:NoExecute,team=a:NoSchedule,cni:NoSchedule --max-pods=42'\n"
	cases := []struct {
		name string
		own  *string
		want []mimePart
	}{
		{"alone", nil, []mimePart{{"text/x-shellscript", bootstrap}}},
		{"a plain script", ptr.To("#!/bin/bash\necho hi"), []mimePart{{"text/x-shellscript", "#!/bin/bash\necho hi"}, {"text/x-shellscript", bootstrap}}},
		{"MIME parts merged", ptr.To("MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"==B==\"\r\n\r\n--==B==\r\nContent-Type: text/cloud-config\r\n\r\npackages: [jq]\r\n--==B==\r\nContent-Type: text/x-shellscript\r\n\r\necho mine\r\n--==B==--\r\n"),
			[]mimePart{{"text/cloud-config", "packages: [jq]"}, {"text/x-shellscript", "echo mine"}, {"text/x-shellscript", bootstrap}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := decoded(t, testClass(awsv1.AMIFamilyAL2, tc.own, nil))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, readMIME(t, doc)); diff != "" {
				t.Errorf("parts (-want +got):\n%s", diff)
			}
		})
	}
}

// Bottlerocket: TOML whose every setting Bottlerocket's settings model
// accepts (the rules and their sources: test/ec2endpoint/bottlerocket.go,
// from bottlerocket-settings-sdk's KubernetesSettingsV1 and
// modeled-types kubernetes.rs and shared.rs), with taints written
// value:Effect and :Effect.
func TestUserDataBottlerocket(t *testing.T) {
	doc, err := decoded(t, testClass(awsv1.AMIFamilyBottlerocket, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ec2endpoint.BottlerocketKubernetes([]byte(doc)); err != nil {
		t.Fatalf("Bottlerocket refuses the settings: %v\n%s", err, doc)
	}
	var got struct {
		Settings struct {
			Kubernetes struct {
				ClusterName        string              `toml:"cluster-name"`
				APIServer          string              `toml:"api-server"`
				ClusterCertificate string              `toml:"cluster-certificate"`
				ClusterDNSIP       string              `toml:"cluster-dns-ip"`
				MaxPods            int32               `toml:"max-pods"`
				NodeLabels         map[string]string   `toml:"node-labels"`
				NodeTaints         map[string][]string `toml:"node-taints"`
			} `toml:"kubernetes"`
		} `toml:"settings"`
	}
	md, err := toml.Decode(doc, &got)
	if err != nil {
		t.Fatal(err)
	}
	if undecoded := md.Undecoded(); len(undecoded) > 0 {
		t.Errorf("settings this test does not know: %v", undecoded)
	}
	k := got.Settings.Kubernetes
	if diff := cmp.Diff(struct {
		Name, API, CA, DNS string
		Pods               int32
		Labels             map[string]string
		Taints             map[string][]string
	}{"prod", "https://api.example", "Q0E=", "172.20.0.10", 42, map[string]string{"karpenter.sh/nodepool": "web"},
		map[string][]string{"karpenter.sh/unregistered": {":NoExecute"}, "team": {"a:NoSchedule"}, "cni": {":NoSchedule"}}},
		struct {
			Name, API, CA, DNS string
			Pods               int32
			Labels             map[string]string
			Taints             map[string][]string
		}{k.ClusterName, k.APIServer, k.ClusterCertificate, k.ClusterDNSIP, k.MaxPods, k.NodeLabels, k.NodeTaints}); diff != "" {
		t.Errorf("settings (-want +got):\n%s", diff)
	}
}

// What each family refuses, and Custom's user data as the user wrote it.
func TestUserDataRefusedAndCustom(t *testing.T) {
	cases := []struct {
		name  string
		class *awsv1.EC2NodeClass
		want  string
		err   string
	}{
		{"Custom: the user's alone", testClass(awsv1.AMIFamilyCustom, ptr.To("anything"), nil), "anything", ""},
		{"AL2023: a broken MIME document", testClass(awsv1.AMIFamilyAL2023, ptr.To("MIME-Version: 1.0\nContent-Type: multipart/mixed\n\nbody"), nil), "", "not multi-part with a boundary"},
		{"Bottlerocket: the user's settings not TOML", testClass(awsv1.AMIFamilyBottlerocket, ptr.To("[settings"), nil), "", "reading the userData's Bottlerocket settings"},
		{"Bottlerocket: the user's kubernetes settings not a table", testClass(awsv1.AMIFamilyBottlerocket, ptr.To("settings.kubernetes = 1"), nil), "", "kubernetes is not a table"},
		{"Windows: not yet", testClass(awsv1.AMIFamilyWindows2022, nil, nil), "", "Windows2022 is not supported yet"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decoded(t, tc.class)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("user data %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
