package explainserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/clusterstate"
	"github.com/capstan-dev/capstan/pkg/explain"
	"github.com/capstan-dev/capstan/pkg/provisioning/plan"
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
	client         client.Reader
	cluster        *clusterstate.Cluster
	plan           plan.Options
	schedulerNames []string
	clock          clock.PassiveClock
	slots          chan struct{}

	mu       sync.Mutex
	snapshot state.Snapshot
	takenAt  time.Time
}

// Bounds on what explain may cost the controller.
const (
	// MaxConcurrent requests are answered at once.
	MaxConcurrent = 4
	// SnapshotTTL is how long one snapshot answers requests.
	SnapshotTTL = 5 * time.Second
)

// New builds the server over the controller's cache and snapshots.
func New(c client.Reader, cluster *clusterstate.Cluster, opts plan.Options, schedulerNames []string, clk clock.PassiveClock) *Server {
	// The server answers what-ifs; it must not record nominations.
	opts.Nominations = nil
	return &Server{client: c, cluster: cluster, plan: opts, schedulerNames: schedulerNames, clock: clk, slots: make(chan struct{}, MaxConcurrent)}
}

// Handler routes the explain requests.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+Path+"pod/{namespace}/{name}", s.answer(s.pod))
	mux.HandleFunc("GET "+Path+"nodepool/{name}", s.answer(s.nodePool))
	mux.HandleFunc("GET "+Path+"node/{name}", s.answer(s.node))
	return mux
}

// snapshotNow returns a snapshot at most SnapshotTTL old.
func (s *Server) snapshotNow(ctx context.Context) (state.Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.takenAt.IsZero() && s.clock.Since(s.takenAt) < SnapshotTTL {
		return s.snapshot, nil
	}
	snapshot, err := s.cluster.ReadOnlySnapshot(ctx)
	if err != nil {
		return state.Snapshot{}, err
	}
	s.snapshot, s.takenAt = snapshot, s.clock.Now()
	return snapshot, nil
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
	snapshot, err := s.snapshotNow(ctx)
	if err != nil {
		return nil, err
	}
	// Solving modifies nothing in the snapshot, but its pod list is the
	// caller's to change: each request gets its own.
	snapshot.Input.Pods = slices.Clone(snapshot.Input.Pods)
	return explain.ForPod(ctx, explain.PodInput{Pod: p, Snapshot: snapshot, SchedulerNames: s.schedulerNames, Plan: s.plan}), nil
}

func (s *Server) nodePool(r *http.Request) (any, error) {
	ctx := r.Context()
	np := &v1.NodePool{}
	if err := s.client.Get(ctx, client.ObjectKey{Name: r.PathValue("name")}, np); err != nil {
		return nil, err
	}
	snapshot, err := s.snapshotNow(ctx)
	if err != nil {
		return nil, err
	}
	claims := &v1.NodeClaimList{}
	if err := s.client.List(ctx, claims, client.MatchingLabels{v1.NodePoolLabelKey: np.Name}); err != nil {
		return nil, fmt.Errorf("listing nodeclaims of nodepool %s, %w", np.Name, err)
	}
	its, _ := s.cluster.KnownInstanceTypes(np.Name)
	return explain.ForNodePool(explain.NodePoolInput{NodePool: np, Nodes: snapshot.Input.Nodes, NodeClaims: claims.Items, InstanceTypes: its, Now: s.clock.Now()})
}

func (s *Server) node(r *http.Request) (any, error) {
	nc, err := FindNodeClaim(r.Context(), s.client, r.PathValue("name"))
	if err != nil {
		return nil, err
	}
	return explain.ForNode(nc), nil
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
