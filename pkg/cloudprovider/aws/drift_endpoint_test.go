package aws_test

import (
	"context"
	"maps"
	"testing"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/aws"
	"github.com/capstan-dev/capstan/test/ec2endpoint"
)

// On the local endpoint: a node launched into a reservation is not
// drifted while the class lists the reservation, and drifts once the
// class no longer selects it, as on the simulated cloud; the hash the
// launch stamps matches the class's until the class's static fields
// change.
func TestDriftOnTheEndpoint(t *testing.T) {
	ctx := context.Background()
	e := newReservedEnv(t, ec2endpoint.Options{})
	e.reserve("cr-default", func(*awsv1.CapacityReservation) {})
	claim, err := e.p.Create(ctx, e.nodeClaim("nc-1", requirement(v1.CapacityTypeLabelKey, v1.CapacityTypeReserved)))
	if err != nil {
		t.Fatal(err)
	}
	// The class carries what its controller stamps; the launch stamped
	// the claim from the same spec and cluster.
	e.class.Annotations = maps.Clone(claim.Annotations)
	if got, err := e.p.IsDrifted(ctx, claim); err != nil || got != "" {
		t.Fatalf("IsDrifted = %q, %v; want not drifted", got, err)
	}

	e.class.Status.CapacityReservations = nil
	if got, err := e.p.IsDrifted(ctx, claim); err != nil || got != aws.DriftCapacityReservation {
		t.Fatalf("reservation deselected: IsDrifted = %q, %v; want %s", got, err, aws.DriftCapacityReservation)
	}

	e.class.Annotations[aws.NodeClassHashAnnotationKey] = "1"
	if got, err := e.p.IsDrifted(ctx, claim); err != nil || got != aws.DriftNodeClass {
		t.Fatalf("class hash changed: IsDrifted = %q, %v; want %s", got, err, aws.DriftNodeClass)
	}
}
