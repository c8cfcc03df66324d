package scaleup

import (
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/flavors"
	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/state"
)

// Options tune Decide.
type Options struct {
	// MaxInstanceTypes caps each NodeClaim's instance-type options.
	MaxInstanceTypes int
	// MinValuesPolicy and PreferencePolicy are the solver's
	// (provisioning.Options).
	MinValuesPolicy  provisioning.MinValuesPolicy
	PreferencePolicy provisioning.PreferencePolicy
	// Models are the llmaz OpenModels the pods serve, gathered by the
	// shell (flavors.GatherModels); the zero value, llmaz not installed,
	// skips flavor resolution.
	Models flavors.Models
	// Unavailable explains fallbacks: which preferred offerings are out.
	Unavailable *cloudprovider.UnavailableOfferings
	// Nominations, when set, is remembered across decisions so a pod whose
	// planned node registered without fitting it is reported rather than
	// launched for again (see Nominations); nil for one-off what-ifs.
	Nominations *Nominations
}

// Decision is one provisioning round: what the solver decided and the
// NodeClaims to create for it. The controller applies it to the API
// server; `capstan simulate` applies it to its in-memory world.
type Decision struct {
	// Pending counts the pods solved for, flavors resolved; virtual pods
	// are not among them.
	Pending int
	// Result is the solve's, but for virtual pods: NewNodeClaims' Pods
	// may include them (they size the claims), Nominations and Unplaced
	// never do.
	Result provisioning.Result
	// Virtual is where the virtual pods went: nominated to existing or
	// in-flight capacity, or unplaced, never to be bound or told; those
	// planned onto new NodeClaims are in Result.NewNodeClaims.
	Virtual VirtualResult
	// NodeClaims are the objects to create, one per Result.NewNodeClaims
	// entry, in the same order.
	NodeClaims []*v1.NodeClaim
	// FlavorFailures are model-serving pods left out: their flavors could
	// not be resolved.
	FlavorFailures []FlavorFailure
}

// VirtualResult is where a decision placed the virtual pods.
type VirtualResult struct {
	// Count is how many virtual pods were solved for.
	Count       int
	Nominations []provisioning.Nomination
	Unplaced    []provisioning.Unplaced
}

// FlavorFailure is a model-serving pod that can't be provisioned for.
type FlavorFailure struct {
	Pod    *corev1.Pod
	Reason string
	Err    error
}

// Decide resolves llmaz flavors, solves and renders the NodeClaims to
// create, each named by name(nodePool). It is pure: the OpenModels come
// in opts, gathered before.
func Decide(snapshot state.Snapshot, opts Options, name func(nodePool string) string) Decision {
	var d Decision
	var resolved resolvedFlavors
	if opts.Models.Installed {
		snapshot.Input.Pods, resolved, d.FlavorFailures = applyFlavors(snapshot.Input.Pods, opts.Models)
		snapshot.Input.TermRequests = resolved.requests
	}
	d.Pending = len(snapshot.Input.Pods)
	var mismatched []provisioning.Unplaced
	if opts.Nominations != nil {
		snapshot.Input.Pods, mismatched = opts.Nominations.mismatched(snapshot.Input.Pods, snapshot.Input.Nodes)
		defer func() { opts.Nominations.record(d, inFlightNames(snapshot.Input.Nodes), mismatched) }()
	}
	d.Virtual.Count = len(snapshot.Input.Holding) + len(snapshot.Input.Yielding)
	if d.Pending == 0 && d.Virtual.Count == 0 {
		return d
	}
	snapshot.Input.Options.MaxInstanceTypes = opts.MaxInstanceTypes
	snapshot.Input.Options.MinValuesPolicy, snapshot.Input.Options.PreferencePolicy = opts.MinValuesPolicy, opts.PreferencePolicy
	d.Result = provisioning.Solve(snapshot.Input)
	d.Result.Nominations, d.Virtual.Nominations = splitVirtual(d.Result.Nominations, func(n provisioning.Nomination) *corev1.Pod { return n.Pod })
	d.Result.Unplaced, d.Virtual.Unplaced = splitVirtual(d.Result.Unplaced, func(u provisioning.Unplaced) *corev1.Pod { return u.Pod })
	d.Result.Unplaced = append(d.Result.Unplaced, mismatched...)
	for _, c := range d.Result.NewNodeClaims {
		np := snapshot.NodePools[c.NodePool]
		nc := provisioning.NewNodeClaim(np, c, name(np.Name))
		for i, pod := range c.Pods {
			if f := provisioning.FlavorOf(resolved.names[pod], c.Terms[i]); f != "" {
				nc.Annotations[provisioning.FlavorAnnotationKey] = f
				break
			}
		}
		if reason := provisioning.FallbackReason(np, c, opts.Unavailable); reason != "" {
			nc.Annotations[provisioning.FallbackAnnotationKey] = reason
		}
		d.NodeClaims = append(d.NodeClaims, nc)
	}
	annotateGroups(d.NodeClaims, d.Result.NewNodeClaims)
	return d
}

func inFlightNames(nodes []*provisioning.Node) map[string]bool {
	out := map[string]bool{}
	for _, n := range nodes {
		if n.InFlight {
			out[n.Name] = true
		}
	}
	return out
}

// splitVirtual sets the virtual pods' entries (nominations, failures)
// apart: they are never told to a pod or remembered (state.IsVirtual).
func splitVirtual[T any](all []T, pod func(T) *corev1.Pod) (real, virtual []T) {
	for _, e := range all {
		if state.IsVirtual(pod(e)) {
			virtual = append(virtual, e)
		} else {
			real = append(real, e)
		}
	}
	return real, virtual
}
