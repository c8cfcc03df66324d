package clusterstate

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	autoscalingv1 "k8s.io/autoscaler/cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-dev/capstan/pkg/provreq"
	"github.com/capstan-dev/capstan/pkg/state"
)

// ProvisioningRequests lists the ProvisioningRequests and the
// PodTemplates they name and pairs them with objs' pods and NodeClaims
// (provreq.Requests). A cluster without the CRD has none.
func ProvisioningRequests(ctx context.Context, c client.Reader, objs state.Objects) ([]provreq.Request, error) {
	prs := &autoscalingv1.ProvisioningRequestList{}
	if err := c.List(ctx, prs); err != nil {
		if meta.IsNoMatchError(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("listing provisioningrequests, %w", err)
	}
	if len(prs.Items) == 0 {
		return nil, nil
	}
	templates := &corev1.PodTemplateList{}
	if err := c.List(ctx, templates); err != nil {
		return nil, fmt.Errorf("listing podtemplates, %w", err)
	}
	return provreq.Requests(provreq.Objects{Requests: prs.Items, Templates: templates.Items, Pods: objs.Pods, NodeClaims: objs.NodeClaims}), nil
}
