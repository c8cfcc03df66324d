package v1_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	"github.com/capstan-dev/capstan/pkg/test"
)

// Every EC2NodeClass in examples/aws applies as written, with the strict
// field validation kubectl uses (so no field is dropped unnoticed), and
// the server's defaults are the reference's.
func TestExamplesAreAccepted(t *testing.T) {
	ctx := context.Background()
	manifests, err := test.ReadManifests("examples/aws/ec2nodeclass.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(manifests) != 3 {
		t.Fatalf("found %d example EC2NodeClasses, want the 3 documented", len(manifests))
	}
	for _, m := range manifests {
		if err := env.Client.Create(ctx, m.Object, client.FieldValidation("Strict")); err != nil {
			t.Errorf("%s %s: %v", m.Path, m.Object.GetName(), err)
		}
	}

	get := func(name string) *awsv1.EC2NodeClass {
		t.Helper()
		nc := &awsv1.EC2NodeClass{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, nc); err != nil {
			t.Fatal(err)
		}
		return nc
	}

	def := get("default")
	wantMetadata := &awsv1.MetadataOptions{
		HTTPEndpoint:            ptr.To("enabled"),
		HTTPProtocolIPv6:        ptr.To("disabled"),
		HTTPPutResponseHopLimit: ptr.To[int64](1),
		HTTPTokens:              ptr.To("required"),
	}
	if diff := cmp.Diff(wantMetadata, def.Spec.MetadataOptions); diff != "" {
		t.Errorf("default metadataOptions (-want +got):\n%s", diff)
	}
	if got := def.AMIFamily(); got != awsv1.AMIFamilyAL2023 {
		t.Errorf("default's AMI family = %q, want AL2023 from its alias", got)
	}

	// Setting one metadata option keeps the safe defaults of the others.
	pinned := get("pinned-ami")
	wantMetadata.HTTPPutResponseHopLimit = ptr.To[int64](2)
	if diff := cmp.Diff(wantMetadata, pinned.Spec.MetadataOptions); diff != "" {
		t.Errorf("pinned-ami metadataOptions (-want +got):\n%s", diff)
	}
	if got := pinned.Spec.BlockDeviceMappings[0].EBS.VolumeSize; got == nil || got.Cmp(resource.MustParse("100Gi")) != 0 {
		t.Errorf("pinned-ami root volume = %v, want 100Gi", got)
	}
	if got := pinned.Spec.Kubelet.EvictionSoftGracePeriod["memory.available"].Duration.String(); got != "1m0s" {
		t.Errorf("pinned-ami evictionSoftGracePeriod = %s, want 1m", got)
	}

	wantTerms := []awsv1.CapacityReservationSelectorTerm{
		{ID: "cr-0a1b2c3d4e5f60701"},
		{Tags: map[string]string{"team": "ml"}, OwnerID: "111122223333"},
	}
	if diff := cmp.Diff(wantTerms, get("reserved").Spec.CapacityReservationSelectorTerms); diff != "" {
		t.Errorf("reserved capacityReservationSelectorTerms (-want +got):\n%s", diff)
	}
}
