package test

import (
	"k8s.io/apimachinery/pkg/util/rand"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
)

// RandomName is a DNS-1123 name with a random suffix, so tests sharing a
// control plane never collide.
func RandomName(prefix string) string {
	return prefix + "-" + rand.String(8)
}

// NodePool is a valid NodePool with a random name referencing a
// SimNodeClass "default"; each modifier edits it in turn.
func NodePool(mods ...func(*v1.NodePool)) *v1.NodePool {
	np := &v1.NodePool{}
	np.Name = RandomName("nodepool")
	np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{}
	np.Spec.Template.Spec.NodeClassRef = &v1.NodeClassReference{Group: simv1alpha1.Group, Kind: "SimNodeClass", Name: "default"}
	for _, mod := range mods {
		mod(np)
	}
	return np
}

// NodeClaim is a valid NodeClaim with a random name; each modifier edits it
// in turn.
func NodeClaim(mods ...func(*v1.NodeClaim)) *v1.NodeClaim {
	nc := &v1.NodeClaim{}
	nc.Name = RandomName("nodeclaim")
	nc.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{}
	nc.Spec.NodeClassRef = &v1.NodeClassReference{Group: simv1alpha1.Group, Kind: "SimNodeClass", Name: "default"}
	for _, mod := range mods {
		mod(nc)
	}
	return nc
}

// SimNodeClass is a valid SimNodeClass with a random name; each modifier
// edits it in turn.
func SimNodeClass(mods ...func(*simv1alpha1.SimNodeClass)) *simv1alpha1.SimNodeClass {
	nc := &simv1alpha1.SimNodeClass{}
	nc.Name = RandomName("simnodeclass")
	for _, mod := range mods {
		mod(nc)
	}
	return nc
}
