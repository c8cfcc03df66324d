package cpmetrics

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
)

// Metric names.
const (
	DurationMetric = "capstan_cloudprovider_duration_seconds"
	ErrorsMetric   = "capstan_cloudprovider_errors_total"
	// LaunchesMetric counts instances launched, by the offering they
	// launched as; InsufficientCapacityMetric the offerings a launch found
	// without capacity, by offering and reason.
	LaunchesMetric             = "capstan_cloudprovider_launches_total"
	InsufficientCapacityMetric = "capstan_cloudprovider_insufficient_capacity_total"
)

// Values of the errors counter's "error" label.
const (
	ErrorInsufficientCapacity = "insufficient_capacity"
	ErrorNodeClaimNotFound    = "nodeclaim_not_found"
	ErrorNodeClassNotReady    = "nodeclass_not_ready"
	ErrorCreate               = "create"
	ErrorOther                = "other"
)

// ErrorType classifies err for the "error" label; errors wrapped with %w
// are classified by the typed error inside.
func ErrorType(err error) string {
	switch {
	case cloudprovider.IsInsufficientCapacityError(err):
		return ErrorInsufficientCapacity
	case cloudprovider.IsNodeClaimNotFoundError(err):
		return ErrorNodeClaimNotFound
	case cloudprovider.IsNodeClassNotReadyError(err):
		return ErrorNodeClassNotReady
	case cloudprovider.IsCreateError(err):
		return ErrorCreate
	default:
		return ErrorOther
	}
}

// Decorate wraps cp so that every call that reaches the cloud (Create,
// Delete, Get, List, GetInstanceTypes, IsDrifted and, when cp is an
// InterruptionSource, Interruptions) observes its duration in
// capstan_cloudprovider_duration_seconds{method, provider} and counts a
// failure in capstan_cloudprovider_errors_total{method, provider, error}.
// Create also counts, by offering, what launched
// (capstan_cloudprovider_launches_total{provider, nodepool,
// instance_type, zone, capacity_type}) and each offering an
// insufficient-capacity error names
// (capstan_cloudprovider_insufficient_capacity_total{provider,
// instance_type, zone, capacity_type, reason}).
// Name and GetSupportedNodeClasses are passed through
// unmeasured: they return static configuration. Results and errors pass
// through unchanged.
//
// The metrics are registered on reg (nil: not registered). Decorating
// several providers on one registry shares the vectors, told apart by the
// provider label; any other registration conflict panics, as MustRegister
// does, because it is a programming error.
//
// The result implements cloudprovider.InterruptionSource exactly when cp
// does, and cloudprovider.Unwrapper, so cloudprovider.AsInterruptionSource
// finds the source either way; consumers should use that rather than a
// type assertion.
func Decorate(cp cloudprovider.CloudProvider, reg prometheus.Registerer) cloudprovider.CloudProvider {
	return decorate(cp, reg, clock.RealClock{})
}

// decorate is Decorate with the clock durations are measured by.
func decorate(cp cloudprovider.CloudProvider, reg prometheus.Registerer, clk clock.PassiveClock) cloudprovider.CloudProvider {
	d := &decorator{
		cp:       cp,
		provider: cp.Name(),
		clk:      clk,
		duration: register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: DurationMetric,
			Help: "Duration of cloud provider calls in seconds, by method and provider.",
			// Reads take milliseconds, launches up to about a minute.
			Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"method", "provider"})),
		errors: register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: ErrorsMetric,
			Help: "Failed cloud provider calls, by method, provider and error type.",
		}, []string{"method", "provider", "error"})),
		launches: register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: LaunchesMetric,
			Help: "Instances launched, by provider, NodePool and the offering launched as.",
		}, []string{"provider", "nodepool", "instance_type", "zone", "capacity_type"})),
		insufficient: register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: InsufficientCapacityMetric,
			Help: "Offerings a launch found without capacity, by provider, offering and reason.",
		}, []string{"provider", "instance_type", "zone", "capacity_type", "reason"})),
	}
	if src, ok := cp.(cloudprovider.InterruptionSource); ok {
		return &interruptible{decorator: d, src: src}
	}
	return d
}

// register registers c on reg, or returns the collector already registered
// under the same descriptor.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if reg == nil {
		return c
	}
	err := reg.Register(c)
	if err == nil {
		return c
	}
	if are, ok := errors.AsType[prometheus.AlreadyRegisteredError](err); ok {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing
		}
	}
	panic(fmt.Sprintf("registering cloud provider metrics, %v", err))
}

type decorator struct {
	cp           cloudprovider.CloudProvider
	provider     string
	clk          clock.PassiveClock
	duration     *prometheus.HistogramVec
	errors       *prometheus.CounterVec
	launches     *prometheus.CounterVec
	insufficient *prometheus.CounterVec
}

var (
	_ cloudprovider.CloudProvider      = (*decorator)(nil)
	_ cloudprovider.Unwrapper          = (*decorator)(nil)
	_ cloudprovider.InterruptionSource = (*interruptible)(nil)
)

// observe records one call that started at start and returned err.
func (d *decorator) observe(method string, start time.Time, err error) {
	d.duration.WithLabelValues(method, d.provider).Observe(d.clk.Since(start).Seconds())
	if err != nil {
		d.errors.WithLabelValues(method, d.provider, ErrorType(err)).Inc()
	}
}

// Unwrap returns the decorated provider.
func (d *decorator) Unwrap() cloudprovider.CloudProvider { return d.cp }

func (d *decorator) Create(ctx context.Context, nodeClaim *v1.NodeClaim) (*v1.NodeClaim, error) {
	start := d.clk.Now()
	nc, err := d.cp.Create(ctx, nodeClaim)
	d.observe("Create", start, err)
	// A refused launch's capacity errors count too.
	if ice := cloudprovider.UnavailableIn(err); ice != nil {
		for _, o := range ice.Offerings {
			d.insufficient.WithLabelValues(d.provider, o.InstanceType, o.Zone, o.CapacityType, ice.Reason(o)).Inc()
		}
	}
	if err == nil && nc != nil {
		d.launches.WithLabelValues(d.provider, nodeClaim.Labels[v1.NodePoolLabelKey], nc.Labels[v1.LabelInstanceType], nc.Labels[v1.LabelZone], nc.Labels[v1.CapacityTypeLabelKey]).Inc()
	}
	return nc, err
}

func (d *decorator) Delete(ctx context.Context, nodeClaim *v1.NodeClaim) error {
	start := d.clk.Now()
	err := d.cp.Delete(ctx, nodeClaim)
	d.observe("Delete", start, err)
	return err
}

func (d *decorator) Get(ctx context.Context, providerID string) (*v1.NodeClaim, error) {
	start := d.clk.Now()
	nc, err := d.cp.Get(ctx, providerID)
	d.observe("Get", start, err)
	return nc, err
}

func (d *decorator) List(ctx context.Context) ([]*v1.NodeClaim, error) {
	start := d.clk.Now()
	ncs, err := d.cp.List(ctx)
	d.observe("List", start, err)
	return ncs, err
}

func (d *decorator) GetInstanceTypes(ctx context.Context, nodePool *v1.NodePool) ([]*cloudprovider.InstanceType, error) {
	start := d.clk.Now()
	its, err := d.cp.GetInstanceTypes(ctx, nodePool)
	d.observe("GetInstanceTypes", start, err)
	return its, err
}

func (d *decorator) IsDrifted(ctx context.Context, nodeClaim *v1.NodeClaim) (cloudprovider.DriftReason, error) {
	start := d.clk.Now()
	reason, err := d.cp.IsDrifted(ctx, nodeClaim)
	d.observe("IsDrifted", start, err)
	return reason, err
}

func (d *decorator) Name() string { return d.cp.Name() }

func (d *decorator) GetSupportedNodeClasses() []schema.GroupVersionKind {
	return d.cp.GetSupportedNodeClasses()
}

func (d *decorator) RepairPolicies() []cloudprovider.RepairPolicy { return d.cp.RepairPolicies() }

// interruptible is the decorator of a provider that is also an
// InterruptionSource; a separate type so that the decorator implements
// InterruptionSource only when the provider does.
type interruptible struct {
	*decorator
	src cloudprovider.InterruptionSource
}

func (i *interruptible) Interruptions(ctx context.Context) ([]cloudprovider.InterruptionNotice, error) {
	start := i.clk.Now()
	notices, err := i.src.Interruptions(ctx)
	i.observe("Interruptions", start, err)
	return notices, err
}
