package ec2nodeclass

import (
	"fmt"
	"strconv"
	"strings"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	v1 "github.com/capstan-dev/capstan/api/v1"
)

// AliasError is an alias that cannot be resolved for this cluster, in
// words for the AMIsReady condition; retrying does not help.
type AliasError struct {
	// Reason is the condition reason: ReasonUnsupportedAlias or
	// ReasonKubernetesVersionUnknown.
	Reason  string
	Message string
}

func (e *AliasError) Error() string { return e.Message }

// aliasImages is one family's images of one Kubernetes minor version: a
// DescribeImages name pattern each, and the requirements of the variants
// an image of that name serves.
type aliasImages struct {
	name     string
	variants [][]corev1.NodeSelectorRequirement
}

// aliasQueries are the DescribeImages calls that resolve alias: images
// owned by amazon whose names follow the family's public EKS naming for
// the cluster's Kubernetes minor version and the alias's version (any
// release for latest; Resolve keeps the newest per architecture and
// variant). The reference reads the same images' ids from public SSM
// parameters instead; see the package doc.
func aliasQueries(alias awsv1.Alias, kubernetesVersion string) ([]ImageQuery, error) {
	text := strings.ToLower(alias.Family) + "@" + alias.Version
	k8s, minor, ok := minorVersion(kubernetesVersion)
	if !ok {
		return nil, &AliasError{Reason: ReasonKubernetesVersionUnknown, Message: fmt.Sprintf(
			"alias %s names the image built for the cluster's Kubernetes version, and Capstan was not given a valid one (%q)", text, kubernetesVersion)}
	}
	var images []aliasImages
	switch alias.Family {
	case awsv1.AMIFamilyAL2023:
		images = al2023Images(k8s, alias.Version)
	case awsv1.AMIFamilyAL2:
		if minor >= 33 {
			return nil, &AliasError{Reason: ReasonUnsupportedAlias, Message: fmt.Sprintf(
				"alias %s: EKS publishes no AL2 images for Kubernetes 1.33 and later (the cluster runs %s); use an al2023 or bottlerocket alias", text, k8s)}
		}
		images = al2Images(k8s, alias.Version)
	case awsv1.AMIFamilyBottlerocket:
		images = bottlerocketImages(k8s, alias.Version)
	case awsv1.AMIFamilyWindows2019:
		images = windowsImages("2019", awsv1.Windows2019Build, k8s)
	case awsv1.AMIFamilyWindows2022:
		images = windowsImages("2022", awsv1.Windows2022Build, k8s)
	case awsv1.AMIFamilyWindows2025:
		if minor < 35 {
			return nil, &AliasError{Reason: ReasonUnsupportedAlias, Message: fmt.Sprintf(
				"alias %s: EKS publishes Windows Server 2025 images for Kubernetes 1.35 and later only (the cluster runs %s)", text, k8s)}
		}
		images = windowsImages("2025", awsv1.Windows2025Build, k8s)
	default:
		return nil, &AliasError{Reason: ReasonUnsupportedAlias, Message: fmt.Sprintf("alias %s: unknown AMI family", text)}
	}
	out := make([]ImageQuery, 0, len(images))
	for _, img := range images {
		out = append(out, ImageQuery{
			Input:    imagesInput([]ec2types.Filter{filter("name", img.name)}, []string{"amazon"}),
			Variants: img.variants,
		})
	}
	return out, nil
}

// al2023Images: amazon-eks-node-al2023-ARCH-VARIANT-K8S-vDATE.
func al2023Images(k8s, version string) []aliasImages {
	v := version
	if v == awsv1.AliasVersionLatest {
		v = "v*"
	}
	name := func(arch, variant string) string {
		return fmt.Sprintf("amazon-eks-node-al2023-%s-%s-%s-%s", arch, variant, k8s, v)
	}
	return []aliasImages{
		{name("x86_64", "standard"), variants(standard())},
		{name("x86_64", "nvidia"), variants(nvidia())},
		{name("x86_64", "neuron"), variants(neuron())},
		{name("arm64", "standard"), variants(standard())},
		{name("arm64", "nvidia"), variants(nvidia())},
	}
}

// al2Images: amazon-eks[-arm64|-gpu]-node-K8S-vDATE; the GPU image
// serves both Nvidia and Neuron instance types.
func al2Images(k8s, version string) []aliasImages {
	v := version
	if v == awsv1.AliasVersionLatest {
		v = "v*"
	}
	return []aliasImages{
		{fmt.Sprintf("amazon-eks-node-%s-%s", k8s, v), variants(standard())},
		{fmt.Sprintf("amazon-eks-arm64-node-%s-%s", k8s, v), variants(standard())},
		{fmt.Sprintf("amazon-eks-gpu-node-%s-%s", k8s, v), variants(nvidia(), neuron())},
	}
}

// bottlerocketImages: bottlerocket-aws-k8s-K8S[-nvidia]-ARCH-vVERSION-COMMIT,
// ARCH x86_64 or aarch64. Bottlerocket versions are written with or
// without their leading v, as in the reference.
func bottlerocketImages(k8s, version string) []aliasImages {
	v := "v*"
	if version != awsv1.AliasVersionLatest {
		v = "v" + strings.TrimPrefix(version, "v") + "-*"
	}
	return []aliasImages{
		{fmt.Sprintf("bottlerocket-aws-k8s-%s-x86_64-%s", k8s, v), variants(standard(), neuron())},
		{fmt.Sprintf("bottlerocket-aws-k8s-%s-aarch64-%s", k8s, v), variants(standard())},
		{fmt.Sprintf("bottlerocket-aws-k8s-%s-nvidia-x86_64-%s", k8s, v), variants(nvidia())},
		{fmt.Sprintf("bottlerocket-aws-k8s-%s-nvidia-aarch64-%s", k8s, v), variants(nvidia())},
	}
}

// windowsImages: Windows_Server-YEAR-English-Core-EKS_Optimized-K8S-DATE;
// Windows aliases take only latest.
func windowsImages(year, build, k8s string) []aliasImages {
	return []aliasImages{{
		fmt.Sprintf("Windows_Server-%s-English-Core-EKS_Optimized-%s-*", year, k8s),
		variants([]corev1.NodeSelectorRequirement{
			{Key: corev1.LabelOSStable, Operator: corev1.NodeSelectorOpIn, Values: []string{string(corev1.Windows)}},
			{Key: corev1.LabelWindowsBuild, Operator: corev1.NodeSelectorOpIn, Values: []string{build}},
		}),
	}}
}

func variants(v ...[]corev1.NodeSelectorRequirement) [][]corev1.NodeSelectorRequirement { return v }

// standard images have no GPU or accelerator drivers.
func standard() []corev1.NodeSelectorRequirement {
	return []corev1.NodeSelectorRequirement{
		{Key: v1.LabelInstanceAcceleratorCount, Operator: corev1.NodeSelectorOpDoesNotExist},
		{Key: v1.LabelInstanceGPUCount, Operator: corev1.NodeSelectorOpDoesNotExist},
	}
}

func nvidia() []corev1.NodeSelectorRequirement {
	return []corev1.NodeSelectorRequirement{{Key: v1.LabelInstanceGPUCount, Operator: corev1.NodeSelectorOpExists}}
}

func neuron() []corev1.NodeSelectorRequirement {
	return []corev1.NodeSelectorRequirement{{Key: v1.LabelInstanceAcceleratorCount, Operator: corev1.NodeSelectorOpExists}}
}

// minorVersion reads a Kubernetes version such as 1.30, v1.30.2 or
// 1.30+ (as discovery reports some) and returns it as MAJOR.MINOR, the
// form EKS image names use, with the minor number.
func minorVersion(version string) (string, int, bool) {
	major, rest, ok := strings.Cut(strings.TrimPrefix(version, "v"), ".")
	if !ok {
		return "", 0, false
	}
	minorText, _, _ := strings.Cut(rest, ".")
	minorText = strings.TrimSuffix(minorText, "+")
	if _, err := strconv.Atoi(major); err != nil {
		return "", 0, false
	}
	minor, err := strconv.Atoi(minorText)
	if err != nil || minor < 0 {
		return "", 0, false
	}
	return major + "." + strconv.Itoa(minor), minor, true
}
