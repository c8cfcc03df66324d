package explainserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/explain"
	"github.com/capstan-dev/capstan/pkg/provisioning/plan"
	"github.com/capstan-dev/capstan/pkg/state"
)

// Path is where the server is mounted.
const Path = "/explain/"

// Server answers explain requests from the controller's view.
type Server struct {
	client         client.Reader
	cluster        *state.Cluster
	cloud          cloudprovider.CloudProvider
	plan           plan.Options
	schedulerNames []string
	clock          clock.PassiveClock
}

// New builds the server over the controller's cache, snapshot and cloud.
func New(c client.Reader, cluster *state.Cluster, cloud cloudprovider.CloudProvider, opts plan.Options, schedulerNames []string, clk clock.PassiveClock) *Server {
	return &Server{client: c, cluster: cluster, cloud: cloud, plan: opts, schedulerNames: schedulerNames, clock: clk}
}

// Handler routes the explain requests.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+Path+"pod/{namespace}/{name}", s.pod)
	mux.HandleFunc("GET "+Path+"nodepool/{name}", s.nodePool)
	mux.HandleFunc("GET "+Path+"node/{name}", s.node)
	return mux
}

func (s *Server) pod(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	p := &corev1.Pod{}
	if err := s.client.Get(ctx, client.ObjectKey{Namespace: r.PathValue("namespace"), Name: r.PathValue("name")}, p); err != nil {
		fail(w, err)
		return
	}
	snapshot, err := s.cluster.Snapshot(ctx)
	if err != nil {
		fail(w, err)
		return
	}
	reply(w, explain.ForPod(ctx, explain.PodInput{Pod: p, Snapshot: snapshot, SchedulerNames: s.schedulerNames, Plan: s.plan}))
}

func (s *Server) nodePool(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	np := &v1.NodePool{}
	if err := s.client.Get(ctx, client.ObjectKey{Name: r.PathValue("name")}, np); err != nil {
		fail(w, err)
		return
	}
	snapshot, err := s.cluster.Snapshot(ctx)
	if err != nil {
		fail(w, err)
		return
	}
	claims := &v1.NodeClaimList{}
	if err := s.client.List(ctx, claims, client.MatchingLabels{v1.NodePoolLabelKey: np.Name}); err != nil {
		fail(w, err)
		return
	}
	its, err := s.cloud.GetInstanceTypes(ctx, np)
	if err != nil {
		fail(w, fmt.Errorf("getting instance types for nodepool %s, %w", np.Name, err))
		return
	}
	out, err := explain.ForNodePool(explain.NodePoolInput{NodePool: np, Nodes: snapshot.Input.Nodes, NodeClaims: claims.Items, InstanceTypes: its, Now: s.clock.Now()})
	if err != nil {
		fail(w, err)
		return
	}
	reply(w, out)
}

func (s *Server) node(w http.ResponseWriter, r *http.Request) {
	nc, err := FindNodeClaim(r.Context(), s.client, r.PathValue("name"))
	if err != nil {
		fail(w, err)
		return
	}
	reply(w, explain.ForNode(nc))
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

func reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func fail(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	if errors.IsNotFound(err) {
		code = http.StatusNotFound
	}
	http.Error(w, err.Error(), code)
}
