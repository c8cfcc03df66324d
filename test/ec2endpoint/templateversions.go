package ec2endpoint

import (
	"context"
	"slices"
)

type describeLaunchTemplateVersionsResponse struct {
	responseMeta
	Versions []launchTemplateVersionXML `xml:"launchTemplateVersionSet>item"`
}

type launchTemplateVersionXML struct {
	LaunchTemplateID   string          `xml:"launchTemplateId"`
	LaunchTemplateName string          `xml:"launchTemplateName"`
	VersionNumber      int             `xml:"versionNumber"`
	CreateTime         string          `xml:"createTime"`
	CreatedBy          string          `xml:"createdBy"`
	DefaultVersion     bool            `xml:"defaultVersion"`
	Data               templateDataXML `xml:"launchTemplateData"`
}

// templateDataXML is the part of ResponseLaunchTemplateData the endpoint
// keeps.
type templateDataXML struct {
	ImageID            string              `xml:"imageId,omitempty"`
	InstanceType       string              `xml:"instanceType,omitempty"`
	UserData           string              `xml:"userData,omitempty"`
	SecurityGroupIDs   []string            `xml:"securityGroupIdSet>item"`
	IAMInstanceProfile *templateProfileXML `xml:"iamInstanceProfile,omitempty"`
	BlockDevices       []templateDeviceXML `xml:"blockDeviceMappingSet>item"`
}

type templateProfileXML struct {
	Name string `xml:"name"`
}

type templateDeviceXML struct {
	DeviceName string         `xml:"deviceName"`
	EBS        templateEBSXML `xml:"ebs"`
}

type templateEBSXML struct {
	Encrypted           *bool  `xml:"encrypted,omitempty"`
	DeleteOnTermination *bool  `xml:"deleteOnTermination,omitempty"`
	Iops                int    `xml:"iops,omitempty"`
	KMSKeyID            string `xml:"kmsKeyId,omitempty"`
	SnapshotID          string `xml:"snapshotId,omitempty"`
	VolumeSize          int    `xml:"volumeSize,omitempty"`
	VolumeType          string `xml:"volumeType,omitempty"`
	Throughput          int    `xml:"throughput,omitempty"`
}

// describeLaunchTemplateVersions answers for one template's only version
// (1, which $Latest and $Default also name) what its data holds: image,
// instance type, user data, security groups, instance profile and block
// devices.
func (s *Server) describeLaunchTemplateVersions(_ context.Context, p params) (response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	lt, err := s.templateLocked(p.get("LaunchTemplateId"), p.get("LaunchTemplateName"))
	if err != nil {
		return nil, err
	}
	for _, v := range p.list("LaunchTemplateVersion") {
		if !slices.Contains([]string{"$Latest", "$Default", "1"}, v) {
			return nil, errorf("InvalidLaunchTemplateId.VersionNotFound", "Could not find launch template version %s for launch template %s", v, lt.id)
		}
	}
	x := s.templateXML(lt)
	d := lt.data
	data := templateDataXML{ImageID: d.imageID, InstanceType: d.instanceType, UserData: d.userData, SecurityGroupIDs: d.securityGroupIDs}
	if d.instanceProfile != "" {
		data.IAMInstanceProfile = &templateProfileXML{Name: d.instanceProfile}
	}
	for _, bd := range d.blockDevices {
		data.BlockDevices = append(data.BlockDevices, templateDeviceXML{DeviceName: bd.deviceName, EBS: templateEBSXML{
			Encrypted: bd.encrypted, DeleteOnTermination: bd.deleteOnTermination, Iops: bd.iops, KMSKeyID: bd.kmsKeyID,
			SnapshotID: bd.snapshotID, VolumeSize: bd.volumeSize, VolumeType: bd.volumeType, Throughput: bd.throughput,
		}})
	}
	return &describeLaunchTemplateVersionsResponse{Versions: []launchTemplateVersionXML{{
		LaunchTemplateID: lt.id, LaunchTemplateName: lt.name, VersionNumber: 1, CreateTime: x.CreateTime, CreatedBy: x.CreatedBy,
		DefaultVersion: true, Data: data,
	}}}, nil
}
