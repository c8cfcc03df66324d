package ec2endpoint

import (
	"context"
	"fmt"
	"slices"
)

type copyImageResponse struct {
	responseMeta
	ImageID string `xml:"imageId"`
}

// imageList is the AMIs as they are now: the synthesized ones and the
// copies made since. Images are only ever added, so the slice a caller
// gets stays as it was.
func (s *Server) imageList() []image {
	s.imagesMu.RLock()
	defer s.imagesMu.RUnlock()
	return s.images
}

// copyImage is CopyImage within the endpoint's region: a new AMI of the
// account's, available at once, named Name, created now, with the
// source's architecture and (unless Description is given) description,
// as EC2 copies an image the account can launch (the EC2 API reference,
// CopyImage). A new image matching an EC2NodeClass's selector is how an
// AMI update reaches its nodes (drift). Names are unique per account
// (InvalidAMIName.Duplicate); another source region is not served.
func (s *Server) copyImage(_ context.Context, p params) (response, error) {
	src, name, region := p.get("SourceImageId"), p.get("Name"), p.get("SourceRegion")
	switch {
	case src == "":
		return nil, errorf("MissingParameter", "The request must contain the parameter SourceImageId")
	case name == "":
		return nil, errorf("MissingParameter", "The request must contain the parameter Name")
	case region == "":
		return nil, errorf("MissingParameter", "The request must contain the parameter SourceRegion")
	case region != s.profile.Spec.Region:
		return nil, errorf("InvalidParameterValue", "Copying from region %s is not served by this endpoint: it serves %s only", region, s.profile.Spec.Region)
	}
	s.imagesMu.Lock()
	defer s.imagesMu.Unlock()
	i := slices.IndexFunc(s.images, func(img image) bool { return img.id == src })
	if i < 0 {
		return nil, errorf("InvalidAMIID.NotFound", "The image id '[%s]' does not exist", src)
	}
	if slices.ContainsFunc(s.images, func(img image) bool { return img.owner == s.opts.AccountID && img.name == name }) {
		return nil, errorf("InvalidAMIName.Duplicate", "AMI name %s is already in use by AMI", name)
	}
	from := s.images[i]
	img := image{
		id: fmt.Sprintf("ami-%017x", len(s.images)+1), name: name, description: cmpOr(p.get("Description"), from.description),
		architecture: from.architecture, owner: s.opts.AccountID, created: s.opts.Clock.Now(),
	}
	// A new backing array: readers keep the slice they were handed.
	s.images = append(slices.Clip(s.images), img)
	return &copyImageResponse{ImageID: img.id}, nil
}
