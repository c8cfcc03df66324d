package crd_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/capstan-dev/capstan/config/crd"
)

func TestCRDs(t *testing.T) {
	crds, err := crd.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range crds {
		names = append(names, c.Name)
	}
	want := []string{"capacitybuffers.autoscaling.x-k8s.io", "provisioningrequests.autoscaling.x-k8s.io", "ec2nodeclasses.karpenter.k8s.aws", "nodeclaims.karpenter.sh", "nodeoverlays.karpenter.sh", "nodepools.karpenter.sh", "simnodeclasses.sim.capstan.dev"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("embedded CRDs (-want +got):\n%s", diff)
	}
}
