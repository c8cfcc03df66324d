package simulator

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/admission"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/scaleup"
)

// static keeps each static NodePool at its replicas with the step the
// staticpool controller calls (docs/static.md). A NodePool is usable
// when it is Ready, as the controller waits for: worked out with the
// nodepool controller's step, admission.NodePoolReady.
func (s *Simulator) static(ctx context.Context) (bool, error) {
	var pools []v1.NodePool
	for _, np := range s.world.nodePools {
		if np.Static() {
			pools = append(pools, np)
		}
	}
	if len(pools) == 0 {
		return false, nil
	}
	its, unusable, err := cloudprovider.InstanceTypesByNodePool(ctx, s.cloud, pools)
	if err != nil {
		return false, fmt.Errorf("listing instance types of static nodepools, %w", err)
	}
	claims := s.world.sortedClaims()
	changed := false
	for i := range pools {
		np := &pools[i]
		in := scaleup.StaticInput{NodePool: np, NodeClaims: claims, Nodes: map[string]*corev1.Node{}, Pods: map[string][]*corev1.Pod{}}
		in.Usable = nodePoolReady(np, its, unusable).Status == metav1.ConditionTrue
		for _, nc := range claims {
			if node := s.world.nodeOf(nc); node != nil && nc.Labels[v1.NodePoolLabelKey] == np.Name {
				in.Nodes[node.Name] = node
				in.Pods[node.Name] = s.world.podsOn(node.Name)
			}
		}
		d := scaleup.DecideStatic(in, s.clock.Now(), s.claimName)
		if err := s.applyEffects(ctx, d.Effects()); err != nil {
			return false, err
		}
		changed = changed || len(d.Create)+len(d.Delete) > 0
	}
	return changed, nil
}

// nodePoolReady is np's Ready condition as the nodepool controller sets
// it: its annotations valid and its NodeClass served, which here is the
// cloud's answer for its instance types (unusable says why not).
func nodePoolReady(np *v1.NodePool, its map[string][]*cloudprovider.InstanceType, unusable map[string]string) metav1.Condition {
	nodeClass := metav1.Condition{Type: v1.ConditionTypeNodeClassReady, Status: metav1.ConditionTrue, Reason: v1.ConditionTypeNodeClassReady}
	if _, ok := its[np.Name]; !ok {
		nodeClass.Status, nodeClass.Reason, nodeClass.Message = metav1.ConditionFalse, "NodeClassNotReady", unusable[np.Name]
	}
	return admission.NodePoolReady(admission.ValidationSucceeded(np), nodeClass)
}
