package clusterstate

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-dev/capstan/pkg/flavors"
)

// OpenModels reads the OpenModels the pods serve, once each, when the
// llmaz CRD is installed (mapper knows its kind); without it, model-serving
// pods are provisioned for as plain pods. A model that cannot be read is
// recorded with why, for its pods to report.
func OpenModels(ctx context.Context, c client.Reader, mapper meta.RESTMapper, pods []*corev1.Pod) flavors.Models {
	if _, err := mapper.RESTMapping(flavors.OpenModelGVK.GroupKind(), flavors.OpenModelGVK.Version); err != nil {
		if meta.IsNoMatchError(err) {
			return flavors.Models{}
		}
		return flavors.GatherModels(pods, func(string) (*flavors.OpenModel, error) {
			return nil, fmt.Errorf("looking up the OpenModel API, %w", err)
		})
	}
	return flavors.GatherModels(pods, func(name string) (*flavors.OpenModel, error) {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(flavors.OpenModelGVK)
		if err := c.Get(ctx, client.ObjectKey{Name: name}, u); err != nil {
			return nil, fmt.Errorf("getting openmodel %s, %w", name, err)
		}
		model, err := flavors.FromUnstructured(u)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("openmodel %s", name), err)
		}
		return model, nil
	})
}

// OpenModels reads the OpenModels the pods serve through the cluster's
// client (see OpenModels); with no Mapper, llmaz counts as not installed.
func (c *Cluster) OpenModels(ctx context.Context, pods []*corev1.Pod) flavors.Models {
	if c.Mapper == nil {
		return flavors.Models{}
	}
	return OpenModels(ctx, c.Client, c.Mapper, pods)
}
