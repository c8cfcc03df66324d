package scaleup

import (
	"strconv"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/gang"
	"github.com/capstan-dev/capstan/pkg/provisioning"
)

// annotateGroups marks the NodeClaims launched for each atomic group with
// the group, how many NodeClaims its launch made and the launch's name
// (its first NodeClaim's), which the release (lifecycle.ReleaseGroups)
// reads to let go of a launch as a whole. ncs are claims rendered.
func annotateGroups(ncs []*v1.NodeClaim, claims []*provisioning.NodeClaim) {
	size, launch := map[string]int{}, map[string]string{}
	for i, c := range claims {
		if c.AtomicGroup == "" {
			continue
		}
		if size[c.AtomicGroup] == 0 {
			launch[c.AtomicGroup] = ncs[i].Name
		}
		size[c.AtomicGroup]++
	}
	for i, c := range claims {
		if c.AtomicGroup == "" {
			continue
		}
		ncs[i].Annotations[gang.AtomicGroupAnnotationKey] = c.AtomicGroup
		ncs[i].Annotations[gang.AtomicGroupSizeAnnotationKey] = strconv.Itoa(size[c.AtomicGroup])
		ncs[i].Annotations[gang.AtomicGroupLaunchAnnotationKey] = launch[c.AtomicGroup]
	}
}
