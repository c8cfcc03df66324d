package parity

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/yaml"

	"github.com/capstan-dev/capstan/api"
	"github.com/capstan-dev/capstan/pkg/manifests"
)

// Script is a scenario as simulate input: every version of every object
// it created or changed, and when, to be applied at its offset from an
// origin (the simulated cloud's start, simulate's 0) as the cluster got
// it. It is safe for concurrent use.
type Script struct {
	clock  clock.PassiveClock
	scheme *runtime.Scheme

	mu   sync.Mutex
	docs []*document
}

// document is one version of an object: applied at at, deleted at
// deleted unless that is zero.
type document struct {
	key         string
	at, deleted time.Time
	obj         map[string]any
}

// NewScript starts a script on clk.
func NewScript(clk clock.PassiveClock) (*Script, error) {
	scheme, err := api.NewScheme()
	if err != nil {
		return nil, fmt.Errorf("building the scheme, %w", err)
	}
	return &Script{clock: clk, scheme: scheme}, nil
}

// Apply records objs as the cluster has them now: created, or a new
// version replacing the last.
func (s *Script) Apply(objs ...client.Object) error {
	now := s.clock.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range objs {
		doc, err := s.document(o, now)
		if err != nil {
			return err
		}
		s.docs = append(s.docs, doc)
	}
	return nil
}

// Delete records obj's deletion now.
func (s *Script) Delete(obj client.Object) error {
	now := s.clock.Now()
	probe, err := s.document(obj, now)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	last := s.last(probe.key)
	if last == nil {
		return fmt.Errorf("deleting %s, never applied", probe.key)
	}
	last.deleted = now
	return nil
}

// last is the last version of the object key. The caller holds mu.
func (s *Script) last(key string) *document {
	for i := len(s.docs) - 1; i >= 0; i-- {
		if s.docs[i].key == key {
			return s.docs[i]
		}
	}
	return nil
}

// document is obj as a manifest: its kind, name, namespace, labels,
// annotations and spec (everything but status and what the API server
// filled in), applied at at.
func (s *Script) document(obj client.Object, at time.Time) (*document, error) {
	gvk, err := apiutil.GVKForObject(obj, s.scheme)
	if err != nil {
		return nil, fmt.Errorf("finding the kind of %s, %w", obj.GetName(), err)
	}
	var content map[string]any
	if u, ok := obj.(*unstructured.Unstructured); ok {
		content = runtime.DeepCopyJSON(u.Object)
	} else if content, err = runtime.DefaultUnstructuredConverter.ToUnstructured(obj); err != nil {
		return nil, fmt.Errorf("converting %s %s, %w", gvk.Kind, obj.GetName(), err)
	}
	delete(content, "status")
	meta := map[string]any{"name": obj.GetName()}
	if obj.GetNamespace() != "" {
		meta["namespace"] = obj.GetNamespace()
	}
	if l := obj.GetLabels(); len(l) > 0 {
		meta["labels"] = stringMap(l)
	}
	if a := obj.GetAnnotations(); len(a) > 0 {
		meta["annotations"] = stringMap(a)
	}
	content["metadata"] = meta
	content["apiVersion"], content["kind"] = gvk.GroupVersion().String(), gvk.Kind
	return &document{key: strings.Join([]string{gvk.Group, gvk.Kind, obj.GetNamespace(), obj.GetName()}, "/"), at: at, obj: content}, nil
}

func stringMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// annotate sets a timing annotation on a manifest.
func annotate(obj map[string]any, key string, at time.Duration) {
	meta := obj["metadata"].(map[string]any)
	annotations, _ := meta["annotations"].(map[string]any)
	if annotations == nil {
		annotations = map[string]any{}
		meta["annotations"] = annotations
	}
	annotations[key] = at.String()
}

// Elapsed is the offset from origin now.
func (s *Script) Elapsed(origin time.Time) time.Duration { return offset(origin, s.clock.Now()) }

// offset is at from origin as simulate times it: whole milliseconds,
// nothing before the start.
func offset(origin, at time.Time) time.Duration {
	return max(0, at.Sub(origin).Truncate(time.Millisecond))
}

// YAML is the script as one multi-document manifest timed from origin, in
// the order recorded. Of versions applied at one offset, the last is what
// the cluster had.
func (s *Script) YAML(origin time.Time) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var docs []string
	for i, d := range s.docs {
		at := offset(origin, d.at)
		if slices.ContainsFunc(s.docs[i+1:], func(e *document) bool { return e.key == d.key && offset(origin, e.at) == at }) {
			continue
		}
		obj := runtime.DeepCopyJSON(d.obj)
		if at > 0 {
			annotate(obj, manifests.ApplyAtAnnotation, at)
		}
		if !d.deleted.IsZero() {
			// simulate deletes an object after it applied it.
			annotate(obj, manifests.DeleteAtAnnotation, max(offset(origin, d.deleted), at+time.Millisecond))
		}
		b, err := yaml.Marshal(obj)
		if err != nil {
			return nil, fmt.Errorf("writing %s, %w", d.key, err)
		}
		docs = append(docs, string(b))
	}
	return []byte(strings.Join(docs, "---\n")), nil
}
