package ec2endpoint

import (
	"encoding/base64"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// params is a request's form. The SDK flattens lists and structures into
// dotted keys: InstanceType.1, Filter.2.Value.1,
// LaunchTemplateConfigs.1.Overrides.3.SubnetId (lists count from 1).
type params url.Values

func (p params) get(key string) string { return url.Values(p).Get(key) }

// has reports whether the form sets key.
func (p params) has(key string) bool {
	_, ok := p[key]
	return ok
}

// sub is the part of the form under prefix, keys without "prefix.".
func (p params) sub(prefix string) params {
	out := params{}
	for k, v := range p {
		if rest, ok := strings.CutPrefix(k, prefix+"."); ok {
			out[rest] = v
		}
	}
	return out
}

// items are the members of the list prefix.N, in order of N.
func (p params) items(prefix string) []params {
	sub := p.sub(prefix)
	var ns []int
	for k := range sub {
		head, _, _ := strings.Cut(k, ".")
		if n, err := strconv.Atoi(head); err == nil && !slices.Contains(ns, n) {
			ns = append(ns, n)
		}
	}
	slices.Sort(ns)
	out := make([]params, len(ns))
	for i, n := range ns {
		out[i] = sub.sub(strconv.Itoa(n))
		if v, ok := sub[strconv.Itoa(n)]; ok {
			// A list of strings: the member is the value itself.
			out[i][""] = v
		}
	}
	return out
}

// list is the list of strings prefix.N.
func (p params) list(prefix string) []string {
	var out []string
	for _, item := range p.items(prefix) {
		if v := item.get(""); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// integer is key's value as an integer; set is false when the form
// lacks it.
func (p params) integer(key string) (n int, set bool, err error) {
	v := p.get(key)
	if v == "" {
		return 0, false, nil
	}
	n, convErr := strconv.Atoi(v)
	if convErr != nil {
		return 0, true, errorf("InvalidParameterValue", "Invalid value '%s' for %s", v, key)
	}
	return n, true, nil
}

// tags are the tags prefix.N.Key/Value.
func (p params) tags(prefix string) map[string]string {
	out := map[string]string{}
	for _, t := range p.items(prefix) {
		if k := t.get("Key"); k != "" {
			out[k] = t.get("Value")
		}
	}
	return out
}

// tagSpecifications are TagSpecification.N's tags by resource type.
func (p params) tagSpecifications() map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, spec := range p.items("TagSpecification") {
		rt := spec.get("ResourceType")
		if out[rt] == nil {
			out[rt] = map[string]string{}
		}
		maps.Copy(out[rt], spec.tags("Tag"))
	}
	return out
}

// filter is one Filter.N: a name and the values any of which matches.
type filter struct {
	name   string
	values []string
}

// filters are the request's Filter.N, checked against the filter names
// the resource type knows (tag:KEY, tag-key and tag-value when tagged).
func (p params) filters(known []string, tagged bool) ([]filter, error) {
	var out []filter
	for _, f := range p.items("Filter") {
		name := f.get("Name")
		ok := slices.Contains(known, name) || tagged && (strings.HasPrefix(name, "tag:") || name == "tag-key" || name == "tag-value")
		if !ok {
			return nil, errorf("InvalidParameterValue", "The filter '%s' is invalid", name)
		}
		out = append(out, filter{name: name, values: f.list("Value")})
	}
	return out, nil
}

// resource is what filters see of one resource: its values per filter
// name and, for tagged resources, its tags.
type resource struct {
	fields map[string][]string
	tags   map[string]string
}

// values are the resource's values for a filter name.
func (r resource) values(name string) []string {
	switch {
	case strings.HasPrefix(name, "tag:"):
		if v, ok := r.tags[strings.TrimPrefix(name, "tag:")]; ok {
			return []string{v}
		}
		return nil
	case name == "tag-key":
		return slices.Collect(maps.Keys(r.tags))
	case name == "tag-value":
		return slices.Collect(maps.Values(r.tags))
	}
	return r.fields[name]
}

// matches reports whether r passes every filter: each filter needs one of
// its values (with EC2's * and ? wildcards) to equal one of r's.
func matches(fs []filter, r resource) bool {
	for _, f := range fs {
		have := r.values(f.name)
		if !slices.ContainsFunc(f.values, func(want string) bool {
			return slices.ContainsFunc(have, func(v string) bool { return wildcard(want, v) })
		}) {
			return false
		}
	}
	return true
}

// wildcard matches value against pattern, where * is any run of
// characters and ? any one.
func wildcard(pattern, value string) bool {
	if !strings.ContainsAny(pattern, "*?") {
		return pattern == value
	}
	expr := regexp.QuoteMeta(pattern)
	expr = strings.ReplaceAll(expr, `\*`, ".*")
	expr = strings.ReplaceAll(expr, `\?`, ".")
	ok, _ := regexp.MatchString("^"+expr+"$", value)
	return ok
}

// pageLimits bound MaxResults for an action; def is the page size
// without one, zero meaning everything at once.
type pageLimits struct{ min, max, def int }

// page returns the request's page of items (NextToken, MaxResults) and
// the token of the next one, "" on the last.
func page[T any](p params, items []T, limits pageLimits) ([]T, string, error) {
	size, set, err := p.integer("MaxResults")
	if err != nil {
		return nil, "", err
	}
	switch {
	case !set:
		size = limits.def
	case size < limits.min || size > limits.max:
		return nil, "", errorf("InvalidParameterValue", "Value ( %d ) for parameter maxResults is invalid. Expecting a value between %d and %d.", size, limits.min, limits.max)
	}
	start := 0
	if token := p.get("NextToken"); token != "" {
		raw, decodeErr := base64.RawURLEncoding.DecodeString(token)
		n, convErr := strconv.Atoi(strings.TrimPrefix(string(raw), "offset:"))
		if decodeErr != nil || convErr != nil || !strings.HasPrefix(string(raw), "offset:") || n < 0 || n > len(items) {
			return nil, "", errorf("InvalidParameterValue", "Invalid value '%s' for nextToken", token)
		}
		start = n
	}
	if size == 0 || start+size >= len(items) {
		return items[start:], "", nil
	}
	next := start + size
	return items[start:next], base64.RawURLEncoding.EncodeToString([]byte("offset:" + strconv.Itoa(next))), nil
}

// tagXML is one <item> of a tagSet, sorted by key for a stable document.
type tagXML struct {
	Key   string `xml:"key"`
	Value string `xml:"value"`
}

func tagSet(tags map[string]string) []tagXML {
	out := make([]tagXML, 0, len(tags))
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		out = append(out, tagXML{Key: k, Value: tags[k]})
	}
	return out
}
