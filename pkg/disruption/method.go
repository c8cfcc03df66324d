package disruption

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// Command is one disruption decision: the candidates to disrupt together,
// by which method and for which budget reason.
type Command struct {
	Method     string
	Reason     v1.DisruptionReason
	Candidates []Candidate
}

// Method is one way of disrupting nodes. Compute sees every candidate
// (blocked ones included, so it can report them) and how many nodes of
// each NodePool its reason may still disrupt, and yields a command or
// nothing.
type Method interface {
	Name() string
	Reason() v1.DisruptionReason
	Compute(candidates []Candidate, allowed map[string]int, now time.Time) (Command, bool)
}

// Methods are the voluntary methods in seed 004's order.
func Methods() []Method { return []Method{Emptiness{}} }

// Plan runs the methods one at a time: the first that yields a command
// wins. Budgets are evaluated per NodePool for each method's reason.
func Plan(in Input, methods []Method, now time.Time) (Command, bool, error) {
	candidates := Candidates(in)
	for _, m := range methods {
		allowed, err := allowedByPool(in, m.Reason(), now)
		if err != nil {
			return Command{}, false, err
		}
		if cmd, ok := m.Compute(candidates, allowed, now); ok {
			return cmd, true, nil
		}
	}
	return Command{}, false, nil
}

// allowedByPool is Allowed for each NodePool, counting its NodeClaims
// with nodes, and those being deleted or NotReady.
func allowedByPool(in Input, reason v1.DisruptionReason, now time.Time) (map[string]int, error) {
	nodes := map[string]*corev1.Node{}
	for _, n := range in.Nodes {
		nodes[n.Name] = n
	}
	total, disrupting := map[string]int{}, map[string]int{}
	for _, nc := range in.NodeClaims {
		node := nodes[nc.Status.NodeName]
		if node == nil {
			continue
		}
		pool := nc.Labels[v1.NodePoolLabelKey]
		total[pool]++
		if nc.DeletionTimestamp != nil || node.DeletionTimestamp != nil || !ready(node) {
			disrupting[pool]++
		}
	}
	out := make(map[string]int, len(in.NodePools))
	for _, np := range in.NodePools {
		n, err := Allowed(np, reason, total[np.Name], disrupting[np.Name], now)
		if err != nil {
			return nil, fmt.Errorf("evaluating the %s budgets, %w", reason, err)
		}
		out[np.Name] = n
	}
	return out, nil
}

func ready(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
