package fake_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/fake"
	"github.com/capstan-dev/capstan/pkg/scheduling"
)

// instanceType returns a type with cpu CPUs, the given arch, and offerings.
func instanceType(name, arch string, cpu string, offerings ...*cloudprovider.Offering) *cloudprovider.InstanceType {
	return &cloudprovider.InstanceType{
		Name: name,
		Requirements: scheduling.NewRequirements(
			scheduling.NewRequirement(v1.LabelInstanceType, corev1.NodeSelectorOpIn, name),
			scheduling.NewRequirement(v1.LabelArch, corev1.NodeSelectorOpIn, arch),
		),
		Capacity:  corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourcePods: resource.MustParse("110")},
		Overhead:  cloudprovider.Overhead{KubeReserved: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}},
		Offerings: offerings,
	}
}

func offering(ct, zone string, price float64) *cloudprovider.Offering {
	return &cloudprovider.Offering{CapacityType: ct, Zone: zone, Price: price, Available: cloudprovider.Unlimited}
}

// catalog: c6g.large (arm64) is cheapest, then m5.large, then m5.xlarge;
// reserved m5.xlarge beats them all.
func catalog() []*cloudprovider.InstanceType {
	full := offering(v1.CapacityTypeSpot, "b", 0.01)
	full.Available = 0
	return []*cloudprovider.InstanceType{
		instanceType("m5.xlarge", "amd64", "4",
			offering(v1.CapacityTypeOnDemand, "a", 0.192),
			&cloudprovider.Offering{CapacityType: v1.CapacityTypeReserved, Zone: "b", ReservationID: "cr-1", Price: 0.192e-7, Available: 1}),
		instanceType("m5.large", "amd64", "2",
			offering(v1.CapacityTypeOnDemand, "a", 0.096),
			offering(v1.CapacityTypeSpot, "a", 0.04),
			full),
		instanceType("c6g.large", "arm64", "2",
			offering(v1.CapacityTypeSpot, "a", 0.03),
			offering(v1.CapacityTypeOnDemand, "b", 0.068)),
	}
}

func nodeClaim(name string, cpu string, reqs ...v1.NodeSelectorRequirementWithMinValues) *v1.NodeClaim {
	return &v1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"team": "a"}},
		Spec: v1.NodeClaimSpec{
			Requirements: reqs,
			Resources:    v1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}},
		},
	}
}

func req(key string, op corev1.NodeSelectorOperator, values ...string) v1.NodeSelectorRequirementWithMinValues {
	return v1.NodeSelectorRequirementWithMinValues{Key: key, Operator: op, Values: values}
}

// launched is what a test checks about a launch.
type launched struct {
	ProviderID string
	Labels     map[string]string
	CPU        string
	Alloc      string
}

func launchOf(nc *v1.NodeClaim) launched {
	return launched{
		ProviderID: nc.Status.ProviderID,
		Labels:     nc.Labels,
		CPU:        nc.Status.Capacity.Cpu().String(),
		Alloc:      nc.Status.Allocatable.Cpu().String(),
	}
}

func TestCreatePicksCheapestCompatibleOffering(t *testing.T) {
	cases := []struct {
		name string
		nc   *v1.NodeClaim
		want launched
	}{
		{"no requirements: reserved is cheapest", nodeClaim("nc", "1"), launched{
			ProviderID: "fake://b/1", CPU: "4", Alloc: "3900m",
			Labels: map[string]string{"team": "a", v1.LabelInstanceType: "m5.xlarge", v1.LabelArch: "amd64", v1.LabelZone: "b",
				v1.CapacityTypeLabelKey: "reserved", v1.LabelCapacityReservationID: "cr-1",
				v1.LabelCapacityReservationType: v1.ReservationTypeDefault, v1.LabelCapacityReservationInterruptible: "false"},
		}},
		{"no reserved: cheapest spot, on arm64", nodeClaim("nc", "1", req(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpNotIn, "reserved")), launched{
			ProviderID: "fake://a/1", CPU: "2", Alloc: "1900m",
			Labels: map[string]string{"team": "a", v1.LabelInstanceType: "c6g.large", v1.LabelArch: "arm64", v1.LabelZone: "a",
				v1.CapacityTypeLabelKey: "spot", v1.InterruptibleLabelKey: "true"},
		}},
		{"amd64 on-demand only", nodeClaim("nc", "1",
			req(v1.LabelArch, corev1.NodeSelectorOpIn, "amd64"),
			req(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, "on-demand"),
			req(v1.NodePoolLabelKey, corev1.NodeSelectorOpIn, "default")), launched{
			ProviderID: "fake://a/1", CPU: "2", Alloc: "1900m",
			Labels: map[string]string{"team": "a", v1.LabelInstanceType: "m5.large", v1.LabelArch: "amd64", v1.LabelZone: "a",
				v1.CapacityTypeLabelKey: "on-demand", v1.NodePoolLabelKey: "default"},
		}},
		{"resources rule out the small types", nodeClaim("nc", "3", req(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, "on-demand")), launched{
			ProviderID: "fake://a/1", CPU: "4", Alloc: "3900m",
			Labels: map[string]string{"team": "a", v1.LabelInstanceType: "m5.xlarge", v1.LabelArch: "amd64", v1.LabelZone: "a",
				v1.CapacityTypeLabelKey: "on-demand"},
		}},
		{"zone b spot is full, on-demand in b is next", nodeClaim("nc", "1",
			req(v1.LabelZone, corev1.NodeSelectorOpIn, "b"),
			req(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, "spot", "on-demand")), launched{
			ProviderID: "fake://b/1", CPU: "2", Alloc: "1900m",
			Labels: map[string]string{"team": "a", v1.LabelInstanceType: "c6g.large", v1.LabelArch: "arm64", v1.LabelZone: "b",
				v1.CapacityTypeLabelKey: "on-demand"},
		}},
		{"custom label requirement becomes a label", nodeClaim("nc", "1",
			req("example.com/pool", corev1.NodeSelectorOpIn, "gpu"),
			req(v1.LabelInstanceType, corev1.NodeSelectorOpIn, "m5.large"),
			req(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, "spot")), launched{
			ProviderID: "fake://a/1", CPU: "2", Alloc: "1900m",
			Labels: map[string]string{"team": "a", "example.com/pool": "gpu", v1.LabelInstanceType: "m5.large", v1.LabelArch: "amd64",
				v1.LabelZone: "a", v1.CapacityTypeLabelKey: "spot", v1.InterruptibleLabelKey: "true"},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cp := fake.New(catalog()...)
			got, err := cp.Create(context.Background(), tc.nc)
			if err != nil {
				t.Fatalf("Create() error %v", err)
			}
			if diff := cmp.Diff(tc.want, launchOf(got)); diff != "" {
				t.Errorf("launch (-want +got):\n%s", diff)
			}
			if tc.nc.Status.ProviderID != "" || tc.nc.Labels[v1.LabelInstanceType] != "" {
				t.Error("Create mutated its argument")
			}
		})
	}
}

func TestCreateInsufficientCapacity(t *testing.T) {
	cp := fake.New(catalog()...)
	_, err := cp.Create(context.Background(), nodeClaim("nc", "1",
		req(v1.LabelZone, corev1.NodeSelectorOpIn, "b"),
		req(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, "spot")))
	ice, ok := cloudprovider.AsInsufficientCapacityError(err)
	if !ok {
		t.Fatalf("Create() error %v, want insufficient capacity", err)
	}
	want := []cloudprovider.OfferingKey{{CapacityType: "spot", InstanceType: "m5.large", Zone: "b"}}
	if diff := cmp.Diff(want, ice.Offerings); diff != "" {
		t.Errorf("offerings (-want +got):\n%s", diff)
	}
	if len(cp.Created) != 0 {
		t.Errorf("an instance leaked: %v", cp.Created)
	}

	_, err = cp.Create(context.Background(), nodeClaim("nc", "64"))
	if !cloudprovider.IsInsufficientCapacityError(err) {
		t.Errorf("Create() of an unfittable claim: error %v, want insufficient capacity", err)
	}
}

func TestNextCreateErrIsReturnedOnce(t *testing.T) {
	cp := fake.New(catalog()...)
	boom := cloudprovider.NewCreateError("Boom", nil)
	cp.NextCreateErr = boom
	if _, err := cp.Create(context.Background(), nodeClaim("first", "1")); !errors.Is(err, boom) {
		t.Errorf("first Create() error %v, want %v", err, boom)
	}
	if cp.NextCreateErr != nil || len(cp.Created) != 0 {
		t.Errorf("NextCreateErr %v not cleared or instance launched %v", cp.NextCreateErr, cp.Created)
	}
	if _, err := cp.Create(context.Background(), nodeClaim("second", "1")); err != nil {
		t.Errorf("second Create() error %v", err)
	}
	var names []string
	for _, nc := range cp.CreateCalls {
		names = append(names, nc.Name)
	}
	if diff := cmp.Diff([]string{"first", "second"}, names); diff != "" {
		t.Errorf("CreateCalls (-want +got):\n%s", diff)
	}
}

func TestLifecycleAndRecording(t *testing.T) {
	ctx := context.Background()
	cp := fake.New(catalog()...)
	np := &v1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	its, err := cp.GetInstanceTypes(ctx, np)
	if err != nil || len(its) != 3 {
		t.Fatalf("GetInstanceTypes() = %d types, %v", len(its), err)
	}
	a, _ := cp.Create(ctx, nodeClaim("a", "1"))
	b, _ := cp.Create(ctx, nodeClaim("b", "1"))
	cp.Notices = []cloudprovider.InterruptionNotice{
		{Kind: cloudprovider.SpotInterruption, ProviderID: a.Status.ProviderID},
		{Kind: cloudprovider.ScheduledChange, ProviderID: b.Status.ProviderID},
	}
	for range 2 { // notices are not consumed
		if notices, _ := cp.Interruptions(ctx); len(notices) != 2 {
			t.Errorf("Interruptions() = %v", notices)
		}
	}

	got, err := cp.Get(ctx, a.Status.ProviderID)
	if err != nil || got.Labels[v1.LabelInstanceType] != a.Labels[v1.LabelInstanceType] {
		t.Errorf("Get() = %v, %v", got, err)
	}
	list, _ := cp.List(ctx)
	if len(list) != 2 || list[0].Status.ProviderID > list[1].Status.ProviderID {
		t.Errorf("List() = %v", list)
	}
	if err := cp.Delete(ctx, a); err != nil {
		t.Errorf("Delete() error %v", err)
	}
	if err := cp.Delete(ctx, a); !cloudprovider.IsNodeClaimNotFoundError(err) {
		t.Errorf("second Delete() error %v, want not found", err)
	}
	if _, err := cp.Get(ctx, a.Status.ProviderID); !cloudprovider.IsNodeClaimNotFoundError(err) {
		t.Errorf("Get() of a deleted instance: error %v, want not found", err)
	}
	if notices, _ := cp.Interruptions(ctx); len(notices) != 1 || notices[0].ProviderID != b.Status.ProviderID {
		t.Errorf("Interruptions() after Delete = %v", notices)
	}
	cp.NextDeleteErr = errors.New("throttled")
	if err := cp.Delete(ctx, b); err == nil || cloudprovider.IsNodeClaimNotFoundError(err) {
		t.Errorf("Delete() with NextDeleteErr: error %v", err)
	}
	cp.Drifted = "ImageDrift"
	if reason, _ := cp.IsDrifted(ctx, b); reason != "ImageDrift" {
		t.Errorf("IsDrifted() = %q", reason)
	}

	calls := map[string]int{
		"Create": len(cp.CreateCalls), "Delete": len(cp.DeleteCalls), "Get": len(cp.GetCalls),
		"List": cp.ListCalls, "GetInstanceTypes": len(cp.GetInstanceTypesCalls),
		"IsDrifted": len(cp.IsDriftedCalls), "Interruptions": cp.InterruptionsCalls,
	}
	want := map[string]int{"Create": 2, "Delete": 3, "Get": 2, "List": 1, "GetInstanceTypes": 1, "IsDrifted": 1, "Interruptions": 3}
	if diff := cmp.Diff(want, calls); diff != "" {
		t.Errorf("recorded calls (-want +got):\n%s", diff)
	}
	if cp.GetInstanceTypesCalls[0] != np {
		t.Error("GetInstanceTypesCalls does not hold the NodePool passed")
	}

	cp.Reset()
	if cp.InstanceTypes != nil || cp.CreateCalls != nil || cp.Created != nil || cp.Drifted != "" || cp.InterruptionsCalls != 0 {
		t.Errorf("Reset left state: %+v", cp)
	}
	cp.InstanceTypes = catalog()
	if nc, _ := cp.Create(ctx, nodeClaim("c", "1")); nc.Status.ProviderID != "fake://b/1" {
		t.Errorf("provider ids do not restart after Reset: %s", nc.Status.ProviderID)
	}
}

func TestStaticMethods(t *testing.T) {
	cp := fake.New()
	if cp.Name() != "fake" {
		t.Errorf("Name() = %q", cp.Name())
	}
	if gvks := cp.GetSupportedNodeClasses(); len(gvks) != 1 || gvks[0].Kind != "SimNodeClass" {
		t.Errorf("GetSupportedNodeClasses() = %v", gvks)
	}
}
