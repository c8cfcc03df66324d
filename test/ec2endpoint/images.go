package ec2endpoint

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Owners of the synthesized public AMIs: the EKS optimized AMIs' account
// and Bottlerocket's, both aliased "amazon".
const (
	eksAMIOwner          = "602401143452"
	bottlerocketAMIOwner = "092701018921"
	amazonAlias          = "amazon"
)

// image is a synthesized AMI.
type image struct {
	id, name, description, architecture, owner, alias string
	created                                           time.Time
	public                                            bool
	tags                                              map[string]string
}

// amiRelease is one release of the public AMIs: EKS AL2023's date
// version and Bottlerocket's version, and when both came out.
type amiRelease struct {
	created            time.Time
	al2023, bottlerock string
}

// synthesizeImages lists the AMIs DescribeImages serves: for each
// Kubernetes version of Options and each of two releases (January and
// June 2025, so a provider picking the newest by CreationDate has a
// choice), the EKS AL2023 standard and nvidia variants and Bottlerocket's
// standard and nvidia variants, each for x86_64 and arm64, and AL2023's
// neuron variant for x86_64, named as the
// public ones are (amazon-eks-node-al2023-x86_64-standard-1.37-v20250610,
// bottlerocket-aws-k8s-1.37-aarch64-v1.40.0-8b2d1a07); and one private
// AMI of the account's, <cluster>-custom-al2023-x86_64, tagged
// karpenter.sh/discovery=<cluster>. Ids are ami- and 17 hex digits,
// numbered from 1 in that order.
func (s *Server) synthesizeImages() []image {
	releases := []amiRelease{
		{created: time.Date(2025, 1, 10, 8, 0, 0, 0, time.UTC), al2023: "v20250110", bottlerock: "v1.30.0-5f3a9ef6"},
		{created: time.Date(2025, 6, 10, 8, 0, 0, 0, time.UTC), al2023: "v20250610", bottlerock: "v1.40.0-8b2d1a07"},
	}
	var out []image
	add := func(img image) {
		img.id = fmt.Sprintf("ami-%017x", len(out)+1)
		out = append(out, img)
	}
	for _, k8s := range s.opts.KubernetesVersions {
		for _, r := range releases {
			for _, arch := range []string{"x86_64", "arm64"} {
				for _, variant := range []string{"standard", "nvidia"} {
					add(image{
						name:         fmt.Sprintf("amazon-eks-node-al2023-%s-%s-%s-%s", arch, variant, k8s, r.al2023),
						description:  fmt.Sprintf("EKS-optimized Kubernetes node based on Amazon Linux 2023, (k8s: %s, %s variant)", k8s, variant),
						architecture: arch, owner: eksAMIOwner, alias: amazonAlias, created: r.created, public: true,
					})
				}
				brArch := map[string]string{"x86_64": "x86_64", "arm64": "aarch64"}[arch]
				for _, variant := range []string{"", "nvidia-"} {
					add(image{
						name:         fmt.Sprintf("bottlerocket-aws-k8s-%s-%s%s-%s", k8s, variant, brArch, r.bottlerock),
						description:  fmt.Sprintf("bottlerocket-aws-k8s-%s-%s%s", k8s, variant, brArch),
						architecture: arch, owner: bottlerocketAMIOwner, alias: amazonAlias, created: r.created, public: true,
					})
				}
			}
		}
	}
	add(image{
		name: s.opts.ClusterName + "-custom-al2023-x86_64", description: "the account's own node image",
		architecture: "x86_64", owner: s.opts.AccountID, created: releases[1].created.AddDate(0, 1, 0),
		tags: s.discoveryTags(s.opts.ClusterName + "-custom-al2023-x86_64"),
	})
	// EKS's AL2023 Neuron variant, for inf and trn types, exists for
	// x86_64 only; listed last so the other images keep their ids.
	for _, k8s := range s.opts.KubernetesVersions {
		for _, r := range releases {
			add(image{
				name:         fmt.Sprintf("amazon-eks-node-al2023-x86_64-neuron-%s-%s", k8s, r.al2023),
				description:  fmt.Sprintf("EKS-optimized Kubernetes node based on Amazon Linux 2023, (k8s: %s, neuron variant)", k8s),
				architecture: "x86_64", owner: eksAMIOwner, alias: amazonAlias, created: r.created, public: true,
			})
		}
	}
	return out
}

type describeImagesResponse struct {
	responseMeta
	Images    []imageXML `xml:"imagesSet>item"`
	NextToken string     `xml:"nextToken,omitempty"`
}

type imageXML struct {
	ImageID            string               `xml:"imageId"`
	ImageLocation      string               `xml:"imageLocation"`
	ImageState         string               `xml:"imageState"`
	ImageOwnerID       string               `xml:"imageOwnerId"`
	CreationDate       string               `xml:"creationDate"`
	IsPublic           bool                 `xml:"isPublic"`
	Architecture       string               `xml:"architecture"`
	ImageType          string               `xml:"imageType"`
	ImageOwnerAlias    string               `xml:"imageOwnerAlias,omitempty"`
	Name               string               `xml:"name"`
	Description        string               `xml:"description"`
	RootDeviceType     string               `xml:"rootDeviceType"`
	RootDeviceName     string               `xml:"rootDeviceName"`
	BlockDeviceMapping []blockDeviceMapping `xml:"blockDeviceMapping>item"`
	VirtualizationType string               `xml:"virtualizationType"`
	Hypervisor         string               `xml:"hypervisor"`
	EnaSupport         bool                 `xml:"enaSupport"`
	PlatformDetails    string               `xml:"platformDetails"`
	UsageOperation     string               `xml:"usageOperation"`
	BootMode           string               `xml:"bootMode"`
	DeprecationTime    string               `xml:"deprecationTime"`
	Tags               []tagXML             `xml:"tagSet>item"`
}

type blockDeviceMapping struct {
	DeviceName string   `xml:"deviceName"`
	EBS        ebsBlock `xml:"ebs"`
}

type ebsBlock struct {
	SnapshotID          string `xml:"snapshotId"`
	VolumeSize          int    `xml:"volumeSize"`
	VolumeType          string `xml:"volumeType"`
	DeleteOnTermination bool   `xml:"deleteOnTermination"`
	Encrypted           bool   `xml:"encrypted"`
}

func (img image) xml() imageXML {
	location := img.owner + "/" + img.name
	if img.alias != "" {
		location = img.alias + "/" + img.name
	}
	return imageXML{
		ImageID: img.id, ImageLocation: location, ImageState: "available", ImageOwnerID: img.owner,
		CreationDate: timestamp(img.created), IsPublic: img.public, Architecture: img.architecture, ImageType: "machine",
		ImageOwnerAlias: img.alias, Name: img.name, Description: img.description, RootDeviceType: "ebs", RootDeviceName: "/dev/xvda",
		BlockDeviceMapping: []blockDeviceMapping{{DeviceName: "/dev/xvda", EBS: ebsBlock{
			SnapshotID: "snap-" + strings.TrimPrefix(img.id, "ami-"), VolumeSize: 20, VolumeType: "gp3", DeleteOnTermination: true,
		}}},
		VirtualizationType: "hvm", Hypervisor: "xen", EnaSupport: true, PlatformDetails: "Linux/UNIX", UsageOperation: "RunInstances",
		BootMode: "uefi-preferred", DeprecationTime: timestamp(img.created.AddDate(2, 0, 0)), Tags: tagSet(img.tags),
	}
}

func (img image) resource() resource {
	return resource{fields: map[string][]string{
		"image-id": {img.id}, "name": {img.name}, "description": {img.description}, "architecture": {img.architecture},
		"owner-id": {img.owner}, "owner-alias": {img.alias}, "state": {"available"}, "image-type": {"machine"},
		"is-public": {strconv.FormatBool(img.public)}, "root-device-type": {"ebs"}, "virtualization-type": {"hvm"},
		"hypervisor": {"xen"},
	}, tags: img.tags}
}

// describeImages serves the synthesized AMIs. Owners takes account ids,
// "amazon" and "self", as EC2's does; without Owners, ImageIds or
// ExecutableBy every AMI the account can launch is listed, its own and
// the public ones.
func (s *Server) describeImages(_ context.Context, p params) (response, error) {
	fs, err := p.filters([]string{
		"image-id", "name", "description", "architecture", "owner-id", "owner-alias", "state", "image-type",
		"is-public", "root-device-type", "virtualization-type", "hypervisor",
	}, true)
	if err != nil {
		return nil, err
	}
	ids, owners := p.list("ImageId"), p.list("Owner")
	images := s.imageList()
	for _, id := range ids {
		if !strings.HasPrefix(id, "ami-") {
			return nil, errorf("InvalidAMIID.Malformed", "Invalid id: \"%s\" (expecting \"ami-...\")", id)
		}
		if !slices.ContainsFunc(images, func(img image) bool { return img.id == id }) {
			return nil, errorf("InvalidAMIID.NotFound", "The image id '[%s]' does not exist", id)
		}
	}
	var out []imageXML
	for _, img := range images {
		if len(ids) > 0 && !slices.Contains(ids, img.id) || len(owners) > 0 && !s.ownedBy(img, owners) || !matches(fs, img.resource()) {
			continue
		}
		out = append(out, img.xml())
	}
	items, next, err := page(p, out, pageLimits{min: 6, max: 1000})
	if err != nil {
		return nil, err
	}
	return &describeImagesResponse{Images: items, NextToken: next}, nil
}

func (s *Server) ownedBy(img image, owners []string) bool {
	for _, o := range owners {
		if o == img.owner || o == "self" && img.owner == s.opts.AccountID || o != "" && o == img.alias {
			return true
		}
	}
	return false
}
