package ec2nodeclass

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	v1 "github.com/capstan-dev/capstan/api/v1"
)

func aliasClass(alias string) *awsv1.EC2NodeClass {
	return &awsv1.EC2NodeClass{Spec: awsv1.EC2NodeClassSpec{AMISelectorTerms: []awsv1.AMISelectorTerm{{Alias: alias}}}}
}

// queryText is an image query as "owners name-pattern [variants]".
func queryText(q ImageQuery) string {
	var name string
	for _, f := range q.Input.Filters {
		if aws.ToString(f.Name) == "name" {
			name = strings.Join(f.Values, ",")
		}
	}
	var variants []string
	for _, v := range q.Variants {
		var keys []string
		for _, r := range v {
			keys = append(keys, r.Key[strings.LastIndex(r.Key, "/")+1:]+"-"+string(r.Operator)+strings.Join(r.Values, ","))
		}
		variants = append(variants, strings.Join(keys, "&"))
	}
	return strings.Join(q.Input.Owners, ",") + " " + name + " [" + strings.Join(variants, " | ") + "]"
}

const (
	std = "instance-accelerator-count-DoesNotExist&instance-gpu-count-DoesNotExist"
	nv  = "instance-gpu-count-Exists"
	nrn = "instance-accelerator-count-Exists"
)

func TestAliasQueries(t *testing.T) {
	cases := []struct {
		alias, version string
		want           []string
	}{
		{"al2023@latest", "1.30", []string{
			"amazon amazon-eks-node-al2023-x86_64-standard-1.30-v* [" + std + "]",
			"amazon amazon-eks-node-al2023-x86_64-nvidia-1.30-v* [" + nv + "]",
			"amazon amazon-eks-node-al2023-x86_64-neuron-1.30-v* [" + nrn + "]",
			"amazon amazon-eks-node-al2023-arm64-standard-1.30-v* [" + std + "]",
			"amazon amazon-eks-node-al2023-arm64-nvidia-1.30-v* [" + nv + "]",
		}},
		{"al2023@v20240807", "v1.31.2-eks-1234", []string{
			"amazon amazon-eks-node-al2023-x86_64-standard-1.31-v20240807 [" + std + "]",
			"amazon amazon-eks-node-al2023-x86_64-nvidia-1.31-v20240807 [" + nv + "]",
			"amazon amazon-eks-node-al2023-x86_64-neuron-1.31-v20240807 [" + nrn + "]",
			"amazon amazon-eks-node-al2023-arm64-standard-1.31-v20240807 [" + std + "]",
			"amazon amazon-eks-node-al2023-arm64-nvidia-1.31-v20240807 [" + nv + "]",
		}},
		{"al2@v20240807", "1.29+", []string{
			"amazon amazon-eks-node-1.29-v20240807 [" + std + "]",
			"amazon amazon-eks-arm64-node-1.29-v20240807 [" + std + "]",
			"amazon amazon-eks-gpu-node-1.29-v20240807 [" + nv + " | " + nrn + "]",
		}},
		{"bottlerocket@latest", "1.30", []string{
			"amazon bottlerocket-aws-k8s-1.30-x86_64-v* [" + std + " | " + nrn + "]",
			"amazon bottlerocket-aws-k8s-1.30-aarch64-v* [" + std + "]",
			"amazon bottlerocket-aws-k8s-1.30-nvidia-x86_64-v* [" + nv + "]",
			"amazon bottlerocket-aws-k8s-1.30-nvidia-aarch64-v* [" + nv + "]",
		}},
		{"bottlerocket@1.20.5", "1.30", []string{
			"amazon bottlerocket-aws-k8s-1.30-x86_64-v1.20.5-* [" + std + " | " + nrn + "]",
			"amazon bottlerocket-aws-k8s-1.30-aarch64-v1.20.5-* [" + std + "]",
			"amazon bottlerocket-aws-k8s-1.30-nvidia-x86_64-v1.20.5-* [" + nv + "]",
			"amazon bottlerocket-aws-k8s-1.30-nvidia-aarch64-v1.20.5-* [" + nv + "]",
		}},
		{"windows2019@latest", "1.30", []string{"amazon Windows_Server-2019-English-Core-EKS_Optimized-1.30-* [os-Inwindows&windows-build-In10.0.17763]"}},
		{"windows2022@latest", "1.30", []string{"amazon Windows_Server-2022-English-Core-EKS_Optimized-1.30-* [os-Inwindows&windows-build-In10.0.20348]"}},
		{"windows2025@latest", "1.35", []string{"amazon Windows_Server-2025-English-Core-EKS_Optimized-1.35-* [os-Inwindows&windows-build-In10.0.26100]"}},
	}
	for _, tc := range cases {
		t.Run(tc.alias+" on "+tc.version, func(t *testing.T) {
			queries, err := ImageQueries(aliasClass(tc.alias), tc.version, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, q := range queries {
				got = append(got, queryText(q))
				if !aws.ToBool(q.Input.IncludeDeprecated) {
					t.Errorf("%s leaves deprecated images out", queryText(q))
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("queries (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAliasErrors(t *testing.T) {
	cases := []struct {
		alias, version, reason, message string
	}{
		{"al2023@latest", "", ReasonKubernetesVersionUnknown, "alias al2023@latest names the image built for the cluster's Kubernetes version, and Capstan was not given a valid one"},
		{"al2023@latest", "latest", ReasonKubernetesVersionUnknown, `("latest")`},
		{"al2@latest", "1.33", ReasonUnsupportedAlias, "alias al2@latest: EKS publishes no AL2 images for Kubernetes 1.33 and later (the cluster runs 1.33)"},
		{"windows2025@latest", "1.34", ReasonUnsupportedAlias, "Kubernetes 1.35 and later only (the cluster runs 1.34)"},
		{"ubuntu@latest", "1.30", ReasonUnsupportedAlias, "alias @latest: unknown AMI family"},
	}
	for _, tc := range cases {
		t.Run(tc.alias+" on "+tc.version, func(t *testing.T) {
			_, err := ImageQueries(aliasClass(tc.alias), tc.version, nil)
			aliasErr, ok := errors.AsType[*AliasError](err)
			if !ok {
				t.Fatalf("error %v, want an *AliasError", err)
			}
			if aliasErr.Reason != tc.reason || !strings.Contains(aliasErr.Message, tc.message) {
				t.Errorf("error %s: %q, want %s containing %q", aliasErr.Reason, aliasErr.Message, tc.reason, tc.message)
			}
		})
	}
}

func TestMinorVersion(t *testing.T) {
	for in, want := range map[string]string{"1.30": "1.30", "v1.30.2": "1.30", "1.29+": "1.29", "1.31.0-eks-a1b2": "1.31", "1.030": "1.30"} {
		if got, _, ok := minorVersion(in); !ok || got != want {
			t.Errorf("minorVersion(%q) = %q, %v, want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "1", "x.30", "1.x", "1.-1"} {
		if got, _, ok := minorVersion(in); ok {
			t.Errorf("minorVersion(%q) = %q, want not ok", in, got)
		}
	}
}

// An alias through the fake account: amazon's images of the cluster's
// minor version only, the newest per architecture and variant, and a
// pinned version picks that release.
func TestAliasResolution(t *testing.T) {
	day := 24 * time.Hour
	amd, arm := ec2types.ArchitectureValuesX8664, ec2types.ArchitectureValuesArm64
	api := &fakeEC2{now: start, images: []ec2types.Image{
		image("ami-x-old", "amazon-eks-node-al2023-x86_64-standard-1.30-v20240701", "amazon", amd, start.Add(-60*day)),
		image("ami-x-new", "amazon-eks-node-al2023-x86_64-standard-1.30-v20240807", "amazon", amd, start.Add(-30*day)),
		image("ami-a-new", "amazon-eks-node-al2023-arm64-standard-1.30-v20240807", "amazon", arm, start.Add(-30*day)),
		image("ami-x-nv", "amazon-eks-node-al2023-x86_64-nvidia-1.30-v20240807", "amazon", amd, start.Add(-30*day)),
		image("ami-x-129", "amazon-eks-node-al2023-x86_64-standard-1.29-v20240901", "amazon", amd, start.Add(-day)),
		image("ami-copy", "amazon-eks-node-al2023-x86_64-standard-1.30-v20250101", fakeAccount, amd, start.Add(-day)),
		image("ami-br", "bottlerocket-aws-k8s-1.30-aarch64-v1.20.5-a3e8bda1", "amazon", arm, start.Add(-day)),
		image("ami-br-fips", "bottlerocket-aws-k8s-1.30-fips-aarch64-v1.20.5-a3e8bda1", "amazon", arm, start.Add(-day)),
	}}
	cases := []struct {
		alias string
		want  []string
	}{
		{"al2023@latest", []string{
			"ami-a-new/arm64/instance-gpu-count-DoesNotExist/instance-accelerator-count-DoesNotExist",
			"ami-x-new/amd64/instance-gpu-count-DoesNotExist/instance-accelerator-count-DoesNotExist",
			"ami-x-nv/amd64/instance-gpu-count-Exists",
		}},
		{"al2023@v20240701", []string{"ami-x-old/amd64/instance-gpu-count-DoesNotExist/instance-accelerator-count-DoesNotExist"}},
		{"bottlerocket@v1.20.5", []string{"ami-br/arm64/instance-gpu-count-DoesNotExist/instance-accelerator-count-DoesNotExist"}},
		{"al2@latest", nil},
	}
	for _, tc := range cases {
		t.Run(tc.alias, func(t *testing.T) {
			nc := aliasClass(tc.alias)
			found := Gather(context.Background(), api, nil, nc, "1.30")
			if err := found.Err(); err != nil {
				t.Fatal(err)
			}
			status := Resolve(nc, found, start)
			if diff := cmp.Diff(tc.want, amiIDs(status)); diff != "" {
				t.Errorf("amis (-want +got):\n%s", diff)
			}
		})
	}
	// The status entries' requirements in full, for one alias image.
	nc := aliasClass("al2023@v20240701")
	got := Resolve(nc, Gather(context.Background(), api, nil, nc, "1.30"), start).AMIs
	want := []awsv1.AMI{{ID: "ami-x-old", Name: "amazon-eks-node-al2023-x86_64-standard-1.30-v20240701", Requirements: []corev1.NodeSelectorRequirement{
		{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}},
		{Key: "karpenter.k8s.aws/instance-gpu-count", Operator: corev1.NodeSelectorOpDoesNotExist},
		{Key: v1.LabelInstanceAcceleratorCount, Operator: corev1.NodeSelectorOpDoesNotExist},
	}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ami (-want +got):\n%s", diff)
	}
}
