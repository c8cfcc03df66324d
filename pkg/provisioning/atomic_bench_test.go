package provisioning_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/capstan-dev/capstan/pkg/gang"
	"github.com/capstan-dev/capstan/pkg/provisioning"
)

// asGang puts every pod of in into one gang, copies of the pods.
func asGang(in provisioning.Input, key string) provisioning.Input {
	pods := make([]*corev1.Pod, len(in.Pods))
	for i, p := range in.Pods {
		cp := p.DeepCopy()
		if cp.Annotations == nil {
			cp.Annotations = map[string]string{}
		}
		cp.Annotations[gang.AtomicGroupAnnotationKey] = key
		pods[i] = cp
	}
	in.Pods = pods
	return in
}

// A 200-pod gang planned in one solve, over the simulated cloud's
// catalog: the all-or-nothing check adds a pass over the result to the
// solve (docs/batch.md, "Gangs").
func BenchmarkSolveGang200(b *testing.B) {
	benchmarkSolve(b, asGang(catalogWorkload(200, 1), "ml/train"), quality)
}

// The same pods without the gang, for comparison.
func BenchmarkSolveCatalog200(b *testing.B) {
	benchmarkSolve(b, catalogWorkload(200, 1), quality)
}
