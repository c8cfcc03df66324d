package parity

import (
	"fmt"
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
// it created or changed, applied at the offset from origin (the
// simulated cloud's start, simulate's 0) the cluster got it at. It is
// safe for concurrent use.
type Script struct {
	origin time.Time
	clock  clock.PassiveClock
	scheme *runtime.Scheme

	mu   sync.Mutex
	docs []*document
}

// document is one version of an object.
type document struct {
	key string
	at  time.Duration
	obj map[string]any
}

// NewScript starts a script whose offsets count from origin on clk.
func NewScript(origin time.Time, clk clock.PassiveClock) (*Script, error) {
	scheme, err := api.NewScheme()
	if err != nil {
		return nil, fmt.Errorf("building the scheme, %w", err)
	}
	return &Script{origin: origin, clock: clk, scheme: scheme}, nil
}

// Elapsed is the offset now.
func (s *Script) Elapsed() time.Duration {
	return s.clock.Since(s.origin).Truncate(time.Millisecond)
}

// Apply records objs as the cluster has them now: created, or a new
// version replacing the last.
func (s *Script) Apply(objs ...client.Object) error {
	at := s.Elapsed()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range objs {
		doc, err := s.document(o, at)
		if err != nil {
			return err
		}
		// Two versions at one instant: the later is what the cluster has.
		if last := s.last(doc.key); last != nil && last.at == at {
			*last = *doc
			continue
		}
		s.docs = append(s.docs, doc)
	}
	return nil
}

// Delete records obj's deletion now: its last version's delete-at.
func (s *Script) Delete(obj client.Object) error {
	at := s.Elapsed()
	probe, err := s.document(obj, at)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	last := s.last(probe.key)
	if last == nil {
		return fmt.Errorf("deleting %s, never applied", probe.key)
	}
	// simulate deletes an object after it applied it.
	at = max(at, last.at+time.Millisecond)
	annotate(last.obj, manifests.DeleteAtAnnotation, at)
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
func (s *Script) document(obj client.Object, at time.Duration) (*document, error) {
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
	doc := &document{key: strings.Join([]string{gvk.Group, gvk.Kind, obj.GetNamespace(), obj.GetName()}, "/"), at: at, obj: content}
	if at > 0 {
		annotate(content, manifests.ApplyAtAnnotation, at)
	}
	return doc, nil
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

// YAML is the script as one multi-document manifest, in the order
// recorded.
func (s *Script) YAML() ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var docs []string
	for _, d := range s.docs {
		b, err := yaml.Marshal(d.obj)
		if err != nil {
			return nil, fmt.Errorf("writing %s, %w", d.key, err)
		}
		docs = append(docs, string(b))
	}
	return []byte(strings.Join(docs, "---\n")), nil
}
