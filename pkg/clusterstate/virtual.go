package clusterstate

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-dev/capstan/pkg/provreq"
	"github.com/capstan-dev/capstan/pkg/state"
)

// VirtualPods is the one place the shell gathers virtual pods
// (state.Objects.VirtualPods): for each kind that holds capacity it lists
// the objects and what sizing them reads, and calls that kind's pure
// sizing step. List calls it, so the provisioner, the disruption
// controller and explain see the same virtual pods; `capstan simulate`
// calls the same steps on its world. Each kind's pods carry
// state.VirtualPodAnnotationKey.
func VirtualPods(ctx context.Context, c client.Reader, objs state.Objects) ([]corev1.Pod, error) {
	var out []corev1.Pod
	requests, err := ProvisioningRequests(ctx, c, objs)
	if err != nil {
		return nil, err
	}
	out = append(out, provreq.VirtualPods(requests)...)
	return out, nil
}
