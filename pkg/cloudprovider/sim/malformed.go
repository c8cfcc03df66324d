package sim

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// MalformedValues are the values in obj of a type that decodes itself
// (a json.Unmarshaler: quantities, durations, times) and refuses them, by
// path, found by walking obj along t's JSON fields: decoding stops at
// the first and does not say where it is. pkg/manifests uses it for the
// kinds it reads.
func MalformedValues(obj any, t reflect.Type, path *field.Path) field.ErrorList {
	if path != nil && reflect.PointerTo(t).Implements(reflect.TypeFor[json.Unmarshaler]()) {
		data, err := json.Marshal(obj)
		if err == nil {
			err = reflect.New(t).Interface().(json.Unmarshaler).UnmarshalJSON(data)
		}
		if err != nil {
			return field.ErrorList{field.Invalid(path, obj, err.Error())}
		}
		return nil
	}
	var errs field.ErrorList
	switch t.Kind() {
	case reflect.Pointer:
		return MalformedValues(obj, t.Elem(), path)
	case reflect.Slice:
		items, _ := obj.([]any)
		for i, item := range items {
			errs = append(errs, MalformedValues(item, t.Elem(), path.Index(i))...)
		}
	case reflect.Map:
		m, _ := obj.(map[string]any)
		for _, k := range slices.Sorted(maps.Keys(m)) {
			errs = append(errs, MalformedValues(m[k], t.Elem(), path.Key(k))...)
		}
	case reflect.Struct:
		m, _ := obj.(map[string]any)
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			switch {
			case !f.IsExported() || name == "-":
			case name == "" && f.Anonymous: // inlined, as TypeMeta
				errs = append(errs, MalformedValues(obj, f.Type, path)...)
			case m[name] != nil:
				errs = append(errs, MalformedValues(m[name], f.Type, path.Child(name))...)
			}
		}
	}
	return errs
}
