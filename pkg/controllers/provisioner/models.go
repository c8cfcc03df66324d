package provisioner

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-dev/capstan/pkg/flavors"
	"github.com/capstan-dev/capstan/pkg/scaleup"
)

// APIModelLookup reads OpenModels through the client when the llmaz CRD is
// installed; without it, model-serving pods are provisioned for as plain
// pods.
func APIModelLookup(c client.Client) scaleup.ModelLookup {
	return func(ctx context.Context, name string) (*flavors.OpenModel, bool, error) {
		if _, err := c.RESTMapper().RESTMapping(flavors.OpenModelGVK.GroupKind(), flavors.OpenModelGVK.Version); err != nil {
			if meta.IsNoMatchError(err) {
				return nil, false, nil
			}
			return nil, true, fmt.Errorf("looking up the OpenModel API, %w", err)
		}
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(flavors.OpenModelGVK)
		if err := c.Get(ctx, client.ObjectKey{Name: name}, u); err != nil {
			return nil, true, fmt.Errorf("getting openmodel %s, %w", name, err)
		}
		model, err := flavors.FromUnstructured(u)
		if err != nil {
			return nil, true, errors.Join(fmt.Errorf("openmodel %s", name), err)
		}
		return model, true, nil
	}
}
