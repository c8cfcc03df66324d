package explainserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	autoscalingv1 "k8s.io/autoscaler/cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1"

	"github.com/capstan-dev/capstan/pkg/provreq"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/clusterstate"
	"github.com/capstan-dev/capstan/pkg/disruption"
	"github.com/capstan-dev/capstan/pkg/explain"
	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/scaleup"
	"github.com/capstan-dev/capstan/pkg/state"
)

// Path is where the server is mounted.
const Path = "/explain/"

// Server answers explain requests from the controller's view. It only
// reads: objects from the informer cache and the instance types the
// provisioner last got from the cloud (clusterstate.Cluster.ReadOnlySnapshot),
// never the cloud itself. Snapshots are reused for SnapshotTTL and at most
// MaxConcurrent requests are answered at once (the rest get 429), so
// explain cannot starve the autoscaler.
type Server struct {
	client  client.Reader
	cluster *clusterstate.Cluster
	opts    Options
	clock   clock.PassiveClock
	slots   chan struct{}

	mu       sync.Mutex
	objects  state.Objects
	snapshot state.Snapshot
	takenAt  time.Time
}

// Options are what the controller decides with, so explain answers as
// it would.
type Options struct {
	// Plan are the provisioner's options.
	Plan scaleup.Options
	// SchedulerNames are the schedulers Capstan serves.
	SchedulerNames []string
	// Drift, SpotToSpot and NodeRepair are the disruption controller's
	// feature gates; RepairPolicies its cloud provider's.
	Drift, SpotToSpot, NodeRepair bool
	RepairPolicies                []cloudprovider.RepairPolicy
}

// Bounds on what explain may cost the controller.
const (
	// MaxConcurrent requests are answered at once.
	MaxConcurrent = 4
	// SnapshotTTL is how long one snapshot answers requests.
	SnapshotTTL = 5 * time.Second
)

// Deps are what the server reads.
type Deps struct {
	// Reader is the controller's cache.
	Reader client.Reader
	// Cluster takes the snapshots explained.
	Cluster *clusterstate.Cluster
	// Clock ages snapshots.
	Clock clock.PassiveClock
}

// New builds the server over the controller's cache and snapshots.
func New(deps Deps, opts Options) *Server {
	// The server answers what-ifs; it must not record nominations.
	opts.Plan.Nominations = nil
	return &Server{client: deps.Reader, cluster: deps.Cluster, opts: opts, clock: deps.Clock, slots: make(chan struct{}, MaxConcurrent)}
}

// Register mounts the server at Path on mgr's metrics server, behind its
// filter (apiauth with --metrics-secure); with metrics disabled, explain
// is too.
func (s *Server) Register(_ context.Context, mgr manager.Manager) error {
	if err := mgr.AddMetricsServerExtraHandler(Path, s.Handler()); err != nil {
		return fmt.Errorf("mounting explain at %s, %w", Path, err)
	}
	return nil
}

// Handler routes the explain requests.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+Path+"pod/{namespace}/{name}", s.answer(s.pod))
	mux.HandleFunc("GET "+Path+"nodepool/{name}", s.answer(s.nodePool))
	mux.HandleFunc("GET "+Path+"node/{name}", s.answer(s.node))
	mux.HandleFunc("GET "+Path+"provisioningrequest/{namespace}/{name}", s.answer(s.provisioningRequest))
	return mux
}

// snapshotNow returns a snapshot at most SnapshotTTL old, and the
// objects it was built from. Both are shared between requests: read
// them, never change them.
func (s *Server) snapshotNow(ctx context.Context) (state.Objects, state.Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.takenAt.IsZero() && s.clock.Since(s.takenAt) < SnapshotTTL {
		return s.objects, s.snapshot, nil
	}
	objs, snapshot, err := s.cluster.ReadOnlySnapshotWithObjects(ctx)
	if err != nil {
		return state.Objects{}, state.Snapshot{}, err
	}
	// The requests within SnapshotTTL solve this snapshot many times;
	// what they share is read-only, so they may at once.
	snapshot.Input.Prepared = provisioning.Prepare(snapshot.Input)
	s.objects, s.snapshot, s.takenAt = objs, snapshot, s.clock.Now()
	return objs, snapshot, nil
}

// answer serves an explanation as JSON, or its error: 404 for what does
// not exist, 500 otherwise.
func (s *Server) answer(explainer func(*http.Request) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		select {
		case s.slots <- struct{}{}:
			defer func() { <-s.slots }()
		default:
			w.Header().Set("Retry-After", "1")
			http.Error(w, "too many explain requests at once; retry", http.StatusTooManyRequests)
			return
		}
		out, err := explainer(r)
		if err != nil {
			code := http.StatusInternalServerError
			if errors.IsNotFound(err) {
				code = http.StatusNotFound
			}
			http.Error(w, err.Error(), code)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	}
}

func (s *Server) pod(r *http.Request) (any, error) {
	ctx := r.Context()
	p := &corev1.Pod{}
	if err := s.client.Get(ctx, client.ObjectKey{Namespace: r.PathValue("namespace"), Name: r.PathValue("name")}, p); err != nil {
		return nil, err
	}
	_, snapshot, err := s.snapshotNow(ctx)
	if err != nil {
		return nil, err
	}
	// Solving modifies nothing in the snapshot, but its pod list is the
	// caller's to change: each request gets its own.
	snapshot.Input.Pods = slices.Clone(snapshot.Input.Pods)
	plan := s.opts.Plan
	plan.Models = s.cluster.OpenModels(ctx, []*corev1.Pod{p})
	return explain.ForPod(explain.PodInput{Pod: p, Snapshot: snapshot, SchedulerNames: s.opts.SchedulerNames, Plan: plan}), nil
}

func (s *Server) nodePool(r *http.Request) (any, error) {
	ctx := r.Context()
	np := &v1.NodePool{}
	if err := s.client.Get(ctx, client.ObjectKey{Name: r.PathValue("name")}, np); err != nil {
		return nil, err
	}
	objs, snapshot, err := s.snapshotNow(ctx)
	if err != nil {
		return nil, err
	}
	claims := &v1.NodeClaimList{}
	if err := s.client.List(ctx, claims, client.MatchingLabels{v1.NodePoolLabelKey: np.Name}); err != nil {
		return nil, fmt.Errorf("listing nodeclaims of nodepool %s, %w", np.Name, err)
	}
	its, _ := s.cluster.KnownInstanceTypes(np.Name)
	dis := disruption.NewInput(objs, snapshot, disruption.Policies{MinValues: s.opts.Plan.MinValuesPolicy, Preference: s.opts.Plan.PreferencePolicy})
	dis.Pods, dis.Snapshot.Input.TermRequests = scaleup.PinFlavors(dis.Pods, s.cluster.OpenModels(ctx, dis.Pods))
	return explain.ForNodePool(explain.NodePoolInput{NodePool: np, Nodes: snapshot.Input.Nodes, NodeClaims: claims.Items, InstanceTypes: its,
		Disruption: &dis, Now: s.clock.Now()})
}

// node answers from the disruption controller's own candidates, budgets
// and methods (with its Drift gate) over the read-only snapshot.
func (s *Server) node(r *http.Request) (any, error) {
	ctx := r.Context()
	nc, err := FindNodeClaim(ctx, s.client, r.PathValue("name"))
	if err != nil {
		return nil, err
	}
	objs, snapshot, err := s.snapshotNow(ctx)
	if err != nil {
		return nil, err
	}
	dis := disruption.NewInput(objs, snapshot, disruption.Policies{MinValues: s.opts.Plan.MinValuesPolicy, Preference: s.opts.Plan.PreferencePolicy})
	dis.Pods, dis.Snapshot.Input.TermRequests = scaleup.PinFlavors(dis.Pods, s.cluster.OpenModels(ctx, dis.Pods))
	if s.opts.Plan.Unavailable != nil {
		dis.Unavailable = s.opts.Plan.Unavailable.History()
	}
	return explain.ForNode(explain.NodeInput{NodeClaim: nc, Disruption: &dis, Drift: s.opts.Drift, SpotToSpot: s.opts.SpotToSpot,
		NodeRepair: s.opts.NodeRepair, RepairPolicies: s.opts.RepairPolicies, Now: s.clock.Now()}), nil
}

// provisioningRequest answers with the provisioningrequest controller's
// step over the read-only snapshot.
func (s *Server) provisioningRequest(r *http.Request) (any, error) {
	ctx := r.Context()
	objs, snapshot, err := s.snapshotNow(ctx)
	if err != nil {
		return nil, err
	}
	req, err := FindProvisioningRequest(ctx, s.client, objs, r.PathValue("namespace"), r.PathValue("name"))
	if err != nil {
		return nil, err
	}
	return explain.ForProvisioningRequest(req, snapshot, s.clock.Now()), nil
}

// FindProvisioningRequest reads one request and pairs it with objs' pods
// and NodeClaims and its namespace's PodTemplates (provreq.Requests).
func FindProvisioningRequest(ctx context.Context, c client.Reader, objs state.Objects, namespace, name string) (provreq.Request, error) {
	pr := &autoscalingv1.ProvisioningRequest{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, pr); err != nil {
		return provreq.Request{}, err
	}
	templates := &corev1.PodTemplateList{}
	if err := c.List(ctx, templates, client.InNamespace(namespace)); err != nil {
		return provreq.Request{}, fmt.Errorf("listing podtemplates of provisioningrequest %s/%s, %w", namespace, name, err)
	}
	return provreq.Requests(provreq.Objects{Requests: []autoscalingv1.ProvisioningRequest{*pr}, Templates: templates.Items,
		Pods: objs.Pods, NodeClaims: objs.NodeClaims})[0], nil
}

// FindNodeClaim finds a NodeClaim by its name or its Node's.
func FindNodeClaim(ctx context.Context, c client.Reader, name string) (*v1.NodeClaim, error) {
	nc := &v1.NodeClaim{}
	err := c.Get(ctx, client.ObjectKey{Name: name}, nc)
	if err == nil || !errors.IsNotFound(err) {
		return nc, err
	}
	claims := &v1.NodeClaimList{}
	if err := c.List(ctx, claims); err != nil {
		return nil, fmt.Errorf("listing nodeclaims, %w", err)
	}
	for i := range claims.Items {
		if claims.Items[i].Status.NodeName == name {
			return &claims.Items[i], nil
		}
	}
	return nil, errors.NewNotFound(v1.SchemeGroupVersion.WithResource("nodeclaims").GroupResource(), name)
}
