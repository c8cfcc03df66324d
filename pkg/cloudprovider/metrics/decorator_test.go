package cpmetrics

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/fake"
	"github.com/capstan-dev/capstan/pkg/scheduling"
)

// The tests read the registry through Gather rather than
// prometheus/testutil, which would add a module (kylelemons/godebug) to
// go.mod.

// slow is a provider whose Create and Get take a fixed time on the fake
// clock.
type slow struct {
	*fake.CloudProvider
	clk  *clocktesting.FakeClock
	took time.Duration
}

func (s *slow) Create(ctx context.Context, nc *v1.NodeClaim) (*v1.NodeClaim, error) {
	s.clk.Step(s.took)
	return s.CloudProvider.Create(ctx, nc)
}

func (s *slow) Get(ctx context.Context, providerID string) (*v1.NodeClaim, error) {
	s.clk.Step(s.took)
	return s.CloudProvider.Get(ctx, providerID)
}

// noSource hides the fake's Interruptions method.
type noSource struct{ cloudprovider.CloudProvider }

func instanceTypes() []*cloudprovider.InstanceType {
	return []*cloudprovider.InstanceType{{
		Name:         "m5.large",
		Requirements: scheduling.NewRequirements(scheduling.NewRequirement(v1.LabelInstanceType, corev1.NodeSelectorOpIn, "m5.large")),
		Capacity:     corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
		Offerings:    cloudprovider.Offerings{{Zone: "a", CapacityType: v1.CapacityTypeOnDemand, Price: 0.096, Available: cloudprovider.Unlimited}},
	}}
}

// labelsOf renders a metric's labels as "k=v,..." sorted by name.
func labelsOf(m *dto.Metric) string {
	var parts []string
	for _, lp := range m.GetLabel() {
		parts = append(parts, lp.GetName()+"="+lp.GetValue())
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// gather returns every counter value and histogram sample count and sum of
// the registry, keyed "name{labels}" (histograms get " count" and " sum").
func gather(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatalf("gathering metrics, %v", err)
	}
	out := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			key := fmt.Sprintf("%s{%s}", f.GetName(), labelsOf(m))
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				out[key] = m.GetCounter().GetValue()
			case dto.MetricType_HISTOGRAM:
				out[key+" count"] = float64(m.GetHistogram().GetSampleCount())
				out[key+" sum"] = m.GetHistogram().GetSampleSum()
			default:
				t.Errorf("unexpected metric type %s of %s", f.GetType(), f.GetName())
			}
		}
	}
	return out
}

func TestDecoratorRecordsDurationsAndErrors(t *testing.T) {
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	inner := &slow{CloudProvider: fake.New(instanceTypes()...), clk: clk, took: 2 * time.Second}
	reg := prometheus.NewRegistry()
	cp := decorate(inner, reg, clk)

	nc := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "nc", Labels: map[string]string{v1.NodePoolLabelKey: "web"}}}
	launched, err := cp.Create(ctx, nc)
	if err != nil {
		t.Fatalf("Create() error %v", err)
	}
	ice := cloudprovider.NewInsufficientCapacityError(nil)
	ice.Add(cloudprovider.OfferingKey{CapacityType: v1.CapacityTypeSpot, InstanceType: "m5.large", Zone: "a"}, string(cloudprovider.CodeInsufficientInstanceCapacity))
	ice.Add(cloudprovider.OfferingKey{CapacityType: v1.CapacityTypeOnDemand, InstanceType: "m5.large", Zone: "a"}, "")
	inner.NextCreateErr = fmt.Errorf("launching, %w", ice)
	if _, err := cp.Create(ctx, nc); !cloudprovider.IsInsufficientCapacityError(err) {
		t.Errorf("Create() error %v, want the inner error", err)
	}
	// A refusal beside a capacity error counts the capacity error too.
	inner.NextCreateErr = cloudprovider.NewLaunchError([]cloudprovider.OfferingError{
		{Offering: cloudprovider.OfferingKey{CapacityType: v1.CapacityTypeSpot, InstanceType: "m5.large", Zone: "b"}, Code: string(cloudprovider.CodeInsufficientInstanceCapacity)},
		{Offering: cloudprovider.OfferingKey{CapacityType: v1.CapacityTypeOnDemand, InstanceType: "m5.large", Zone: "b"}, Code: string(cloudprovider.CodeUnauthorizedOperation)},
	}, nil)
	_, _ = cp.Create(ctx, nc)
	inner.NextCreateErr = errors.New("throttled")
	_, _ = cp.Create(ctx, nc)
	if _, err := cp.Get(ctx, "fake://nowhere/9"); !cloudprovider.IsNodeClaimNotFoundError(err) {
		t.Errorf("Get() error %v, want not found", err)
	}
	if err := cp.Delete(ctx, launched); err != nil {
		t.Errorf("Delete() error %v", err)
	}

	errs := `capstan_cloudprovider_errors_total{error=%s,method=%s,provider=fake}`
	dur := `capstan_cloudprovider_duration_seconds{method=%s,provider=fake}`
	want := map[string]float64{
		fmt.Sprintf(errs, ErrorInsufficientCapacity, "Create"): 1,
		fmt.Sprintf(errs, ErrorCreate, "Create"):               1,
		fmt.Sprintf(errs, ErrorOther, "Create"):                1,
		fmt.Sprintf(errs, ErrorNodeClaimNotFound, "Get"):       1,
		fmt.Sprintf(dur, "Create") + " count":                  4,
		fmt.Sprintf(dur, "Create") + " sum":                    8, // 4 calls × 2 s
		fmt.Sprintf(dur, "Get") + " count":                     1,
		fmt.Sprintf(dur, "Get") + " sum":                       2,
		fmt.Sprintf(dur, "Delete") + " count":                  1,
		fmt.Sprintf(dur, "Delete") + " sum":                    0,
		"capstan_cloudprovider_launches_total{capacity_type=" + launched.Labels[v1.CapacityTypeLabelKey] + ",instance_type=m5.large,nodepool=web,provider=fake,zone=" + launched.Labels[v1.LabelZone] + "}": 1,
		"capstan_cloudprovider_insufficient_capacity_total{capacity_type=spot,instance_type=m5.large,provider=fake,reason=" + string(cloudprovider.CodeInsufficientInstanceCapacity) + ",zone=a}":           1,
		"capstan_cloudprovider_insufficient_capacity_total{capacity_type=on-demand,instance_type=m5.large,provider=fake,reason=InsufficientCapacity,zone=a}":                                                1,
		"capstan_cloudprovider_insufficient_capacity_total{capacity_type=spot,instance_type=m5.large,provider=fake,reason=" + string(cloudprovider.CodeInsufficientInstanceCapacity) + ",zone=b}":           1,
	}
	if diff := cmp.Diff(want, gather(t, reg)); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
}

func TestErrorType(t *testing.T) {
	cases := []struct {
		err  error
		want string
	}{
		{cloudprovider.NewInsufficientCapacityError(nil), ErrorInsufficientCapacity},
		{fmt.Errorf("x, %w", cloudprovider.NewNodeClaimNotFoundError("id", nil)), ErrorNodeClaimNotFound},
		{fmt.Errorf("x, %w", cloudprovider.NewNodeClassNotReadyError("default", nil)), ErrorNodeClassNotReady},
		{fmt.Errorf("x, %w", cloudprovider.NewCreateError("R", nil)), ErrorCreate},
		{errors.New("boom"), ErrorOther},
	}
	for _, tc := range cases {
		if got := ErrorType(tc.err); got != tc.want {
			t.Errorf("ErrorType(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

func TestDecoratorPassesResultsThrough(t *testing.T) {
	ctx := context.Background()
	inner := fake.New(instanceTypes()...)
	inner.Drifted = "ImageDrift"
	inner.Notices = []cloudprovider.InterruptionNotice{{Kind: cloudprovider.SpotInterruption, ProviderID: "p"}}
	cp := Decorate(inner, prometheus.NewRegistry())

	its, err := cp.GetInstanceTypes(ctx, &v1.NodePool{})
	if err != nil || len(its) != 1 || its[0] != inner.InstanceTypes[0] {
		t.Errorf("GetInstanceTypes() = %v, %v", its, err)
	}
	nc, err := cp.Create(ctx, &v1.NodeClaim{})
	if err != nil || nc.Status.ProviderID != "fake://a/1" || len(inner.CreateCalls) != 1 {
		t.Fatalf("Create() = %v, %v", nc, err)
	}
	got, err := cp.Get(ctx, nc.Status.ProviderID)
	if err != nil || got.Status.ProviderID != nc.Status.ProviderID {
		t.Errorf("Get() = %v, %v", got, err)
	}
	if list, err := cp.List(ctx); err != nil || len(list) != 1 {
		t.Errorf("List() = %v, %v", list, err)
	}
	if reason, err := cp.IsDrifted(ctx, nc); err != nil || reason != "ImageDrift" {
		t.Errorf("IsDrifted() = %q, %v", reason, err)
	}
	if diff := cmp.Diff(inner.GetSupportedNodeClasses(), cp.GetSupportedNodeClasses()); diff != "" {
		t.Errorf("GetSupportedNodeClasses() (-want +got):\n%s", diff)
	}
	if cp.Name() != fake.Name {
		t.Errorf("Name() = %q", cp.Name())
	}
	if u, ok := cp.(cloudprovider.Unwrapper); !ok || u.Unwrap() != inner {
		t.Error("the decorator does not unwrap to the provider")
	}

	src, ok := cp.(cloudprovider.InterruptionSource)
	if !ok {
		t.Fatal("the decorator of an interruption source is not one")
	}
	notices, err := src.Interruptions(ctx)
	if err != nil || len(notices) != 1 || inner.InterruptionsCalls != 1 {
		t.Errorf("Interruptions() = %v, %v", notices, err)
	}
	if found, ok := cloudprovider.AsInterruptionSource(cp); !ok || found != src {
		t.Error("AsInterruptionSource does not return the measured decorator")
	}
}

func TestDecoratorWithoutInterruptionSource(t *testing.T) {
	cp := Decorate(noSource{fake.New()}, nil)
	if _, ok := cp.(cloudprovider.InterruptionSource); ok {
		t.Error("the decorator claims an interruption source the provider lacks")
	}
	if _, ok := cloudprovider.AsInterruptionSource(cp); ok {
		t.Error("AsInterruptionSource found a source")
	}
}

func TestDecoratingTwoProvidersSharesARegistry(t *testing.T) {
	reg := prometheus.NewRegistry()
	a := Decorate(fake.New(), reg)
	b := Decorate(noSource{fake.New()}, reg) // must not panic
	if _, err := a.Get(context.Background(), "x"); err == nil {
		t.Error("Get() of nothing succeeded")
	}
	if _, err := b.Get(context.Background(), "x"); err == nil {
		t.Error("Get() of nothing succeeded")
	}
	got := gather(t, reg)
	if got[`capstan_cloudprovider_errors_total{error=nodeclaim_not_found,method=Get,provider=fake}`] != 2 {
		t.Errorf("metrics %v", got)
	}
}

func TestDecorateConflictingRegistrationPanics(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewCounterVec(prometheus.CounterOpts{Name: ErrorsMetric, Help: "other"}, []string{"x"}))
	defer func() {
		if recover() == nil {
			t.Error("Decorate() did not panic on a conflicting metric")
		}
	}()
	Decorate(fake.New(), reg)
}
