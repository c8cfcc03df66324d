package disruption

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"k8s.io/apimachinery/pkg/api/meta"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/provisioning"
)

// Phase is where a command is in its orchestration.
type Phase string

const (
	// PhaseValidating: decided, waiting out the validation delay before
	// checking the command again against fresh state.
	PhaseValidating Phase = "Validating"
	// PhaseReplacing: candidates tainted, replacements launched; waiting
	// for every replacement to initialize before deleting the candidates.
	PhaseReplacing Phase = "Replacing"
)

// Orchestration is one command on its way: validate → taint → pre-spin
// replacements and wait for them → delete the candidates, or un-taint
// them and abandon the command if a replacement fails.
type Orchestration struct {
	Command   Command
	Phase     Phase
	DecidedAt time.Time
	// StartedAt is when the candidates were tainted.
	StartedAt time.Time
	// Replacements name the NodeClaims launched for the command.
	Replacements []string
}

// Start is a freshly decided command.
func Start(cmd Command, now time.Time) Orchestration {
	return Orchestration{Command: cmd, Phase: PhaseValidating, DecidedAt: now}
}

// ReplacementStatus is how a replacement NodeClaim is doing.
type ReplacementStatus int

const (
	// ReplacementFailed: gone or being deleted before it initialized (the
	// zero value, so a replacement not observed at all has failed).
	ReplacementFailed ReplacementStatus = iota
	// ReplacementLaunching: launched or launching, not initialized yet.
	ReplacementLaunching
	// ReplacementInitialized: up and taking pods.
	ReplacementInitialized
)

// ReplacementStatusOf is how replacement nc is doing (nc nil: it is gone).
// The controller and simulate both observe replacements through it.
func ReplacementStatusOf(nc *v1.NodeClaim) ReplacementStatus {
	switch {
	case nc == nil || nc.DeletionTimestamp != nil:
		return ReplacementFailed
	case meta.IsStatusConditionTrue(nc.Status.Conditions, v1.ConditionTypeInitialized):
		return ReplacementInitialized
	default:
		return ReplacementLaunching
	}
}

// Observation is the fresh state a step decides on.
type Observation struct {
	Input Input
	// Replacements by NodeClaim name; a name missing has failed.
	Replacements map[string]ReplacementStatus
}

// ActionKind is what an action does.
type ActionKind string

const (
	// ActionTaint puts karpenter.sh/disrupted:NoSchedule on the
	// candidates' nodes and records the disruption reason.
	ActionTaint ActionKind = "Taint"
	// ActionUntaint takes the taint off again.
	ActionUntaint ActionKind = "Untaint"
	// ActionLaunch creates the replacement NodeClaims.
	ActionLaunch ActionKind = "Launch"
	// ActionDelete deletes the candidates' NodeClaims; termination
	// drains them.
	ActionDelete ActionKind = "Delete"
)

// Action is one effect for the caller to apply: the controller through
// the API server, simulate to its world.
type Action struct {
	Kind       ActionKind
	Candidates []Candidate
	NodeClaims []*v1.NodeClaim
}

// Options tune orchestration.
type Options struct {
	// Methods are the methods, by which a command is validated again.
	Methods []Method
	// ValidationDelay is how long a command waits before it is checked
	// against fresh state: a pod that just arrived, or a budget just
	// spent, then cancels it.
	ValidationDelay time.Duration
	// ReplacementTimeout bounds how long replacements may take to
	// initialize before the command is abandoned.
	ReplacementTimeout time.Duration
	// Name names a replacement NodeClaim of a NodePool.
	Name func(nodePool string) string
	// HistoryFromFirstTick: the unavailable-offerings history the
	// engine is given starts at its first tick. The controller's first
	// tick comes once its process leads, and of before that its cache
	// knows nothing (the previous leader's marks went with its process),
	// so returns to preferred capacity wait their after from there.
	// Simulate's cache has seen its world from the start: its history is
	// complete.
	HistoryFromFirstTick bool
}

// Default orchestration timings (the reference validates after 15 s and
// polls every 10 s while no command is in flight).
const (
	DefaultValidationDelay    = 15 * time.Second
	DefaultReplacementTimeout = 20 * time.Minute
	DefaultPollInterval       = 10 * time.Second
)

// StepResult is what a step decided.
type StepResult struct {
	Next    Orchestration
	Actions []Action
	// Done: the command finished (its candidates are deleted) or was
	// abandoned (Abandoned says why).
	Done      bool
	Abandoned string
	// ReplacementFailed: abandoned because a replacement failed to
	// launch or initialize in time.
	ReplacementFailed bool
	// WakeAt is when the step must run again even if nothing changes
	// (zero: only a change moves it on).
	WakeAt time.Time
}

// Step moves o on given fresh state and now. It is pure.
func (opts Options) Step(o Orchestration, obs Observation, now time.Time) (StepResult, error) {
	switch o.Phase {
	case PhaseValidating:
		if due := o.DecidedAt.Add(opts.ValidationDelay); now.Before(due) {
			return StepResult{Next: o, WakeAt: due}, nil
		}
		cmd, why := opts.validate(o.Command, obs.Input, now)
		if why != "" {
			return StepResult{Next: o, Done: true, Abandoned: why}, nil
		}
		next := Orchestration{Command: cmd, Phase: PhaseReplacing, DecidedAt: o.DecidedAt, StartedAt: now}
		actions := []Action{{Kind: ActionTaint, Candidates: cmd.Candidates}}
		if len(cmd.Replacements) == 0 {
			return StepResult{Next: next, Done: true, Actions: append(actions, Action{Kind: ActionDelete, Candidates: cmd.Candidates})}, nil
		}
		launch := Action{Kind: ActionLaunch}
		for _, r := range cmd.Replacements {
			np := obs.Input.Snapshot.NodePools[r.NodePool]
			if np == nil {
				return StepResult{Next: o, Done: true, Abandoned: fmt.Sprintf("nodepool %s of the replacement cannot launch now", r.NodePool)}, nil
			}
			nc := provisioning.NewNodeClaim(np, r, opts.Name(r.NodePool))
			launch.NodeClaims = append(launch.NodeClaims, nc)
			next.Replacements = append(next.Replacements, nc.Name)
		}
		return StepResult{Next: next, Actions: append(actions, launch), WakeAt: now.Add(opts.ReplacementTimeout)}, nil
	case PhaseReplacing:
		untaint := []Action{{Kind: ActionUntaint, Candidates: o.Command.Candidates}}
		initialized := 0
		for _, name := range o.Replacements {
			switch obs.Replacements[name] {
			case ReplacementFailed:
				return StepResult{Next: o, Done: true, Actions: untaint, ReplacementFailed: true,
					Abandoned: fmt.Sprintf("replacement nodeclaim %s failed to launch or initialize", name)}, nil
			case ReplacementInitialized:
				initialized++
			}
		}
		if initialized == len(o.Replacements) {
			return StepResult{Next: o, Done: true, Actions: []Action{{Kind: ActionDelete, Candidates: o.Command.Candidates}}}, nil
		}
		if deadline := o.StartedAt.Add(opts.ReplacementTimeout); !now.Before(deadline) {
			return StepResult{Next: o, Done: true, Actions: untaint, ReplacementFailed: true,
				Abandoned: fmt.Sprintf("replacements did not initialize within %s", opts.ReplacementTimeout)}, nil
		}
		return StepResult{Next: o, WakeAt: o.StartedAt.Add(opts.ReplacementTimeout)}, nil
	}
	return StepResult{}, fmt.Errorf("orchestration of %s in unknown phase %q", o.Command.Method, o.Phase)
}

// validate runs the command's method again over its candidates as they
// are now: every one must still be chosen, else the command is
// abandoned, saying why. A command that passes gets fresh replacements.
func (opts Options) validate(cmd Command, in Input, now time.Time) (Command, string) {
	m, ok := methodNamed(opts.Methods, cmd.Method)
	if !ok {
		return Command{}, fmt.Sprintf("method %s is no longer enabled", cmd.Method)
	}
	names := cmd.Names()
	var mine []Candidate
	all := Candidates(in, now)
	for _, c := range all {
		if slices.Contains(names, c.NodeClaim.Name) {
			mine = append(mine, c)
		}
	}
	if len(mine) != len(names) {
		return Command{}, "a candidate is gone"
	}
	allowed := AllowedByPool(in, m.Reason(), now)
	env := newEnv(in, mine, allowed, now, m)
	env.All = all
	out := m.Compute(env)
	for _, name := range names {
		if slices.ContainsFunc(out.Command.Candidates, func(c Candidate) bool { return c.NodeClaim.Name == name }) {
			continue
		}
		for _, v := range out.Verdicts {
			if v.NodeClaim == name {
				return Command{}, fmt.Sprintf("nodeclaim %s: %s", name, v.Message)
			}
		}
		return Command{}, fmt.Sprintf("nodeclaim %s no longer qualifies for %s", name, cmd.Method)
	}
	return out.Command, ""
}

// StaleTaints are the nodes carrying the disrupted taint that nothing
// accounts for: not deleting, and not a candidate of the command in
// flight (active). A command lost to a restart leaves them so; the
// taint must go, or they never take pods again.
func StaleTaints(in Input, active []string) []*corev1.Node {
	claims := map[string]*v1.NodeClaim{}
	for _, nc := range in.NodeClaims {
		claims[nc.Status.NodeName] = nc
	}
	taint := v1.DisruptedNoScheduleTaint()
	var out []*corev1.Node
	for _, n := range in.Nodes {
		nc := claims[n.Name]
		if nc == nil || n.DeletionTimestamp != nil || nc.DeletionTimestamp != nil || slices.Contains(active, nc.Name) {
			continue
		}
		if slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.MatchTaint(&taint) }) {
			out = append(out, n)
		}
	}
	return out
}
