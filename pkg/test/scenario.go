package test

import (
	corev1 "k8s.io/api/core/v1"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
)

// ScenarioTaintKey is the key of the taint that keeps a scenario's nodes
// to its own pods, when scenarios share a cluster.
const ScenarioTaintKey = "scenario"

// ScenarioNodePool is a NodePool of node class snc with requirements reqs,
// tainted so only the pods of namespace's scenario (tolerating it with
// ScenarioToleration) land on its nodes.
func ScenarioNodePool(namespace string, snc *simv1alpha1.SimNodeClass, reqs ...v1.NodeSelectorRequirementWithMinValues) *v1.NodePool {
	return NodePool(func(np *v1.NodePool) {
		np.Spec.Template.Spec.NodeClassRef.Name = snc.Name
		np.Spec.Template.Spec.Taints = []corev1.Taint{{Key: ScenarioTaintKey, Value: namespace, Effect: corev1.TaintEffectNoSchedule}}
		np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements, reqs...)
	})
}

// ScenarioToleration tolerates the taint of namespace's ScenarioNodePool.
func ScenarioToleration(namespace string) corev1.Toleration {
	return corev1.Toleration{Key: ScenarioTaintKey, Operator: corev1.TolerationOpEqual, Value: namespace, Effect: corev1.TaintEffectNoSchedule}
}
