package flavors

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// Models are the OpenModels one decision reads. A shell gathers them
// before calling the step (GatherModels), once per batch, so resolving
// flavors reads plain values and never the API server.
type Models struct {
	// Installed is whether the llmaz API is served: without it,
	// model-serving pods are provisioned for as plain pods.
	Installed bool
	// ByName are the OpenModels read.
	ByName map[string]*OpenModel
	// Errs say why a named OpenModel could not be read (not found,
	// invalid).
	Errs map[string]error
}

// Lookup is the OpenModel named name and whether llmaz is installed; err
// says why it could not be read.
func (m Models) Lookup(name string) (model *OpenModel, installed bool, err error) {
	if !m.Installed {
		return nil, false, nil
	}
	if err := m.Errs[name]; err != nil {
		return nil, true, err
	}
	if model, ok := m.ByName[name]; ok {
		return model, true, nil
	}
	return nil, true, fmt.Errorf("openmodel %s was not read", name)
}

// GatherModels reads, with get, each OpenModel the pods serve, once
// each: what a shell does (against the API server, or the simulator's
// manifests) with llmaz installed, before a step resolves flavors.
func GatherModels(pods []*corev1.Pod, get func(name string) (*OpenModel, error)) Models {
	m := Models{Installed: true, ByName: map[string]*OpenModel{}, Errs: map[string]error{}}
	for _, pod := range pods {
		name, ok := ModelName(pod)
		if !ok {
			continue
		}
		if _, read := m.ByName[name]; read || m.Errs[name] != nil {
			continue
		}
		model, err := get(name)
		if err != nil {
			m.Errs[name] = err
			continue
		}
		m.ByName[name] = model
	}
	return m
}
