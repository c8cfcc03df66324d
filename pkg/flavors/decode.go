package flavors

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
)

// FromUnstructured decodes an llmaz.io/v1alpha1 OpenModel. It reads only
// metadata.name and spec.inferenceConfig.flavors[]: {name, nodeSelector,
// requests | limits}, ignoring every other field so that newer llmaz
// versions still decode. A missing spec, inferenceConfig or flavors (or a
// null one) is a model without flavors.
//
// The flavor's resources come from `requests` (current llmaz) or `limits`
// (the seed); when both are present `requests` wins and `limits` is not
// read at all. Resource names must be qualified names and quantities
// non-negative. Flavor names must be present, non-empty and unique;
// nodeSelector keys and values must be valid label keys and values, since
// a malformed selector would otherwise silently match no node. Every error
// names the offending field and is an *InvalidModelError.
func FromUnstructured(u *unstructured.Unstructured) (*OpenModel, error) {
	if u == nil {
		return nil, &InvalidModelError{errors.New("decoding openmodel: object is nil")}
	}
	name := u.GetName()
	if u.GetAPIVersion() != Group+"/"+Version || u.GetKind() != OpenModelKind {
		return nil, &InvalidModelError{fmt.Errorf("decoding openmodel %s: apiVersion/kind is %q/%q, want %q/%q",
			name, u.GetAPIVersion(), u.GetKind(), Group+"/"+Version, OpenModelKind)}
	}
	if name == "" {
		return nil, &InvalidModelError{errors.New("decoding openmodel: metadata.name is missing")}
	}
	d := decoder{model: name}
	raw, err := d.flavorList(u.Object)
	if err != nil {
		return nil, err
	}
	model := &OpenModel{Name: name}
	seen := make(map[string]int, len(raw))
	for i, item := range raw {
		f, err := d.flavor(i, item)
		if err != nil {
			return nil, err
		}
		if j, dup := seen[f.Name]; dup {
			return nil, d.errorf("spec.inferenceConfig.flavors[%d].name, %q repeats flavors[%d]", i, f.Name, j)
		}
		seen[f.Name] = i
		model.Flavors = append(model.Flavors, f)
	}
	return model, nil
}

// decoder carries the model name into every error message.
type decoder struct{ model string }

// errorf is an *InvalidModelError, so the model's pods report it as such.
func (d decoder) errorf(format string, args ...any) error {
	return &InvalidModelError{fmt.Errorf("decoding openmodel %s: "+format, append([]any{d.model}, args...)...)}
}

// flavorList walks spec.inferenceConfig.flavors by hand, rather than with
// unstructured.NestedSlice, so each error names the exact field.
func (d decoder) flavorList(obj map[string]any) ([]any, error) {
	cur := obj
	path := ""
	for _, field := range []string{"spec", "inferenceConfig"} {
		path += "." + field
		v, ok := cur[field]
		if !ok || v == nil {
			return nil, nil
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, d.errorf("%s, is %s, want an object", path[1:], jsonType(v))
		}
		cur = m
	}
	v, ok := cur["flavors"]
	if !ok || v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, d.errorf("spec.inferenceConfig.flavors, is %s, want a list", jsonType(v))
	}
	return list, nil
}

func (d decoder) flavor(i int, item any) (Flavor, error) {
	field := fmt.Sprintf("spec.inferenceConfig.flavors[%d]", i)
	obj, ok := item.(map[string]any)
	if !ok {
		return Flavor{}, d.errorf("%s, is %s, want an object", field, jsonType(item))
	}
	var f Flavor
	switch name := obj["name"].(type) {
	case nil:
		return Flavor{}, d.errorf("%s.name, is missing", field)
	case string:
		if name == "" {
			return Flavor{}, d.errorf("%s.name, is empty", field)
		}
		f.Name = name
	default:
		return Flavor{}, d.errorf("%s.name, is %s, want a string", field, jsonType(name))
	}
	sel, err := d.nodeSelector(field+".nodeSelector", obj["nodeSelector"])
	if err != nil {
		return Flavor{}, err
	}
	f.NodeSelector = sel
	resField, resValue := "requests", obj["requests"]
	if resValue == nil {
		resField, resValue = "limits", obj["limits"]
	}
	if f.Requests, err = d.resources(field+"."+resField, resValue); err != nil {
		return Flavor{}, err
	}
	return f, nil
}

func (d decoder) nodeSelector(field string, v any) (map[string]string, error) {
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, d.errorf("%s, is %s, want an object", field, jsonType(v))
	}
	if len(m) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(m))
	for key, raw := range m {
		value, ok := raw.(string)
		if !ok {
			return nil, d.errorf("%s[%q], is %s, want a string", field, key, jsonType(raw))
		}
		if errs := validation.IsQualifiedName(key); len(errs) > 0 {
			return nil, d.errorf("%s[%q], invalid label key: %s", field, key, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(value); len(errs) > 0 {
			return nil, d.errorf("%s[%q], invalid label value %q: %s", field, key, value, strings.Join(errs, "; "))
		}
		out[key] = value
	}
	return out, nil
}

func (d decoder) resources(field string, v any) (corev1.ResourceList, error) {
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, d.errorf("%s, is %s, want an object", field, jsonType(v))
	}
	if len(m) == 0 {
		return nil, nil
	}
	out := make(corev1.ResourceList, len(m))
	for name, raw := range m {
		q, err := quantity(raw)
		if err != nil {
			return nil, d.errorf("%s[%q], %w", field, name, err)
		}
		out[corev1.ResourceName(name)] = q
	}
	if err := checkResources(out); err != nil {
		return nil, d.errorf("%s, %w", field, err)
	}
	return out, nil
}

// quantity accepts the forms a quantity takes in decoded JSON or YAML: a
// string ("1", "16Gi") or a number (int64 from JSON integers, float64
// otherwise; other integer types from hand-built objects).
func quantity(v any) (resource.Quantity, error) {
	var s string
	switch n := v.(type) {
	case string:
		s = n
	case int64:
		s = strconv.FormatInt(n, 10)
	case int:
		s = strconv.Itoa(n)
	case int32:
		s = strconv.FormatInt(int64(n), 10)
	case float64:
		s = strconv.FormatFloat(n, 'f', -1, 64)
	default:
		return resource.Quantity{}, fmt.Errorf("is %s, want a quantity string or number", jsonType(v))
	}
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return resource.Quantity{}, fmt.Errorf("parsing quantity %q, %w", s, err)
	}
	if q.Sign() < 0 {
		return resource.Quantity{}, fmt.Errorf("quantity %q is negative", s)
	}
	return q, nil
}

// jsonType names v's JSON type, for errors readable by someone who wrote
// YAML rather than Go.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int, int32, int64, float64:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	default:
		return fmt.Sprintf("a %T", v)
	}
}
