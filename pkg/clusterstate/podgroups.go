package clusterstate

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-dev/capstan/pkg/gang"
	"github.com/capstan-dev/capstan/pkg/state"
)

// PodGroups lists the group objects gangs' min counts are read from,
// where the API server serves them (mapper, from discovery): the
// Workload API's PodGroups (Kubernetes 1.37 serves scheduling.k8s.io
// v1beta1 and v1alpha3 only with the GenericWorkload gate and the
// version enabled; v1beta1 is read when served, as kube-scheduler reads
// it) and scheduler-plugins' where its CRD is installed. Read as
// unstructured objects: scheduler-plugins publishes no Go module the
// proxy serves.
func PodGroups(ctx context.Context, c client.Reader, mapper meta.RESTMapper) ([]unstructured.Unstructured, error) {
	if mapper == nil {
		return nil, nil
	}
	var out []unstructured.Unstructured
	for _, versions := range [][]schema.GroupVersionKind{
		{gang.WorkloadPodGroupV1beta1, gang.WorkloadPodGroupV1alpha3},
		{gang.PluginPodGroup},
	} {
		for _, gvk := range versions {
			served, err := servedKind(mapper, gvk)
			if err != nil {
				return nil, err
			}
			if !served {
				continue
			}
			list := &unstructured.UnstructuredList{}
			list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
			if err := c.List(ctx, list); err != nil {
				return nil, fmt.Errorf("listing %s, %w", gvk, err)
			}
			out = append(out, list.Items...)
			break
		}
	}
	return out, nil
}

// servedKind reports whether discovery knows gvk.
func servedKind(mapper meta.RESTMapper, gvk schema.GroupVersionKind) (bool, error) {
	_, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	switch {
	case err == nil:
		return true, nil
	case meta.IsNoMatchError(err):
		return false, nil
	}
	return false, fmt.Errorf("looking up the %s API, %w", gvk, err)
}

// list is List with the PodGroups the API server serves.
func (c *Cluster) list(ctx context.Context) (state.Objects, error) {
	objs, err := List(ctx, c.Client, c.Sources)
	if err != nil {
		return state.Objects{}, err
	}
	if objs.PodGroups, err = PodGroups(ctx, c.Client, c.Mapper); err != nil {
		return state.Objects{}, err
	}
	return objs, nil
}
