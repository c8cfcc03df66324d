package provisioner

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/effects"
	"github.com/capstan-dev/capstan/pkg/scaleup"
)

// apply carries out a decision's effects against the API server.
func (p *Provisioner) apply(ctx context.Context, effs []effects.Effect) error {
	for _, e := range effs {
		switch e := e.(type) {
		case effects.CreateNodeClaim:
			if err := p.client.Create(ctx, e.NodeClaim); err != nil {
				return fmt.Errorf("creating nodeclaim for nodepool %s, %w", e.NodeClaim.Labels[v1.NodePoolLabelKey], err)
			}
		case effects.Metric:
			if e.Name == scaleup.MetricNodeClaimsCreated {
				p.metrics.nodeClaimsCreated.WithLabelValues(e.Labels...).Add(e.Value)
			}
		case effects.Event:
			pod := &corev1.Pod{}
			if err := p.client.Get(ctx, client.ObjectKey{Namespace: e.Object.Namespace, Name: e.Object.Name}, pod); err != nil {
				continue
			}
			if e.Related == nil {
				p.recorder.Eventf(pod, nil, e.Type, e.Reason, e.Action, "%s", e.Message)
				continue
			}
			related := &v1.NodeClaim{}
			if err := p.client.Get(ctx, client.ObjectKey{Name: e.Related.Name}, related); err != nil {
				related.Name = e.Related.Name
			}
			p.recorder.Eventf(pod, related, e.Type, e.Reason, e.Action, "%s", e.Message)
		}
	}
	return nil
}
