package crd_test

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/capstan-dev/capstan/config/crd"
)

// referenceEC2NodeClassCRD is the reference's CRD at the release Capstan's
// EC2NodeClass API follows (its header names the source and licence).
const referenceEC2NodeClassCRD = "testdata/karpenter.k8s.aws_ec2nodeclasses.v1.14.1.yaml"

// allowedEC2NodeClassDifferences are the only ways Capstan's EC2NodeClass
// schema may differ from the reference's, keyed as schemaDiff writes a
// difference ("<path> <attribute>"). docs/aws.md ("EC2NodeClass") lists
// them for users.
var allowedEC2NodeClassDifferences = map[string]string{
	// The provider launches from the class's status alone, so the
	// placement group the controller resolved is in the status, where
	// the reference keeps it in a provider cache.
	"status.placementGroup present": "Capstan's resolved placement group, additive",
	// The reference's status has no counts; Capstan shows a reservation's
	// free and total instances (DescribeCapacityReservations'
	// AvailableInstanceCount and TotalInstanceCount).
	"status.capacityReservations[].availableInstanceCount present": "Capstan's reservation counts, additive",
	"status.capacityReservations[].totalInstanceCount present":     "Capstan's reservation counts, additive",
}

func TestEC2NodeClassCRDMatchesTheReference(t *testing.T) {
	checkAgainstReference(t, referenceEC2NodeClassCRD, allowedEC2NodeClassDifferences)
}

// checkAgainstReference fails on every difference between the embedded CRD
// and the reference's in file that allowed does not list, and on every
// allowed difference that no longer exists.
func checkAgainstReference(t *testing.T, file string, allowed map[string]string) {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	ref := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(raw, ref); err != nil {
		t.Fatalf("decoding %s: %v", file, err)
	}
	crds, err := crd.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	idx := slices.IndexFunc(crds, func(c *apiextensionsv1.CustomResourceDefinition) bool { return c.Name == ref.Name })
	if idx < 0 {
		t.Fatalf("no embedded CRD %s", ref.Name)
	}
	seen := map[string]bool{}
	for _, d := range crdDiff(ref, crds[idx]) {
		key, _, _ := strings.Cut(d, ": ")
		seen[key] = true
		if _, ok := allowed[key]; !ok {
			t.Errorf("differs from the reference v1.14.1: %s", d)
		}
	}
	for key := range allowed {
		if !seen[key] {
			t.Errorf("allowed difference %q no longer exists: remove it from the allow-list", key)
		}
	}
}

// crdDiff lists how got differs from ref: names, scope, printer columns and
// subresources of each version, and the schema (schemaDiff).
func crdDiff(ref, got *apiextensionsv1.CustomResourceDefinition) []string {
	var out []string
	same := func(key string, a, b any) {
		if ja, jb := jsonText(a), jsonText(b); ja != jb {
			out = append(out, fmt.Sprintf("%s: reference %s, capstan %s", key, ja, jb))
		}
	}
	same("spec.group", ref.Spec.Group, got.Spec.Group)
	same("spec.names", ref.Spec.Names, got.Spec.Names)
	same("spec.scope", ref.Spec.Scope, got.Spec.Scope)
	if len(ref.Spec.Versions) != len(got.Spec.Versions) {
		return append(out, fmt.Sprintf("spec.versions count: reference %d, capstan %d", len(ref.Spec.Versions), len(got.Spec.Versions)))
	}
	for i := range ref.Spec.Versions {
		r, g := ref.Spec.Versions[i], got.Spec.Versions[i]
		same("version name", r.Name, g.Name)
		same("version served", r.Served, g.Served)
		same("version storage", r.Storage, g.Storage)
		same("version subresources", r.Subresources, g.Subresources)
		same("version printer columns", stripColumnDescriptions(r.AdditionalPrinterColumns), stripColumnDescriptions(g.AdditionalPrinterColumns))
		out = append(out, schemaDiff("", r.Schema.OpenAPIV3Schema, g.Schema.OpenAPIV3Schema)...)
	}
	return out
}

func stripColumnDescriptions(cols []apiextensionsv1.CustomResourceColumnDefinition) []apiextensionsv1.CustomResourceColumnDefinition {
	out := slices.Clone(cols)
	for i := range out {
		out[i].Description = ""
	}
	return out
}

// schemaDiff lists, as "<path> <attribute>: reference …, capstan …", every
// validating attribute of the schema at path that differs: type, format,
// pattern, enum, default, bounds, required, CEL rules (rule, message and
// the rest of each), list and map types, and the properties present. Only
// descriptions are not compared.
func schemaDiff(path string, ref, got *apiextensionsv1.JSONSchemaProps) []string {
	if ref == nil && got == nil {
		return nil
	}
	if ref == nil || got == nil {
		return []string{fmt.Sprintf("%s schema: reference %v, capstan %v", path, ref != nil, got != nil)}
	}
	var out []string
	attr := func(name string, a, b any) {
		if ja, jb := jsonText(a), jsonText(b); ja != jb {
			out = append(out, fmt.Sprintf("%s %s: reference %s, capstan %s", path, name, ja, jb))
		}
	}
	attr("type", ref.Type, got.Type)
	attr("format", ref.Format, got.Format)
	attr("pattern", ref.Pattern, got.Pattern)
	attr("enum", ref.Enum, got.Enum)
	attr("default", ref.Default, got.Default)
	attr("minimum", ref.Minimum, got.Minimum)
	attr("maximum", ref.Maximum, got.Maximum)
	attr("exclusiveMinimum", ref.ExclusiveMinimum, got.ExclusiveMinimum)
	attr("exclusiveMaximum", ref.ExclusiveMaximum, got.ExclusiveMaximum)
	attr("minLength", ref.MinLength, got.MinLength)
	attr("maxLength", ref.MaxLength, got.MaxLength)
	attr("minItems", ref.MinItems, got.MinItems)
	attr("maxItems", ref.MaxItems, got.MaxItems)
	attr("minProperties", ref.MinProperties, got.MinProperties)
	attr("maxProperties", ref.MaxProperties, got.MaxProperties)
	attr("nullable", ref.Nullable, got.Nullable)
	attr("required", sorted(ref.Required), sorted(got.Required))
	attr("x-kubernetes-validations", ref.XValidations, got.XValidations)
	attr("x-kubernetes-list-type", ref.XListType, got.XListType)
	attr("x-kubernetes-list-map-keys", ref.XListMapKeys, got.XListMapKeys)
	attr("x-kubernetes-map-type", ref.XMapType, got.XMapType)
	attr("x-kubernetes-preserve-unknown-fields", ref.XPreserveUnknownFields, got.XPreserveUnknownFields)
	attr("x-kubernetes-int-or-string", ref.XIntOrString, got.XIntOrString)
	attr("x-kubernetes-embedded-resource", ref.XEmbeddedResource, got.XEmbeddedResource)

	join := func(child string) string {
		if path == "" {
			return child
		}
		return path + "." + child
	}
	names := map[string]bool{}
	for n := range ref.Properties {
		names[n] = true
	}
	for n := range got.Properties {
		names[n] = true
	}
	for _, n := range sorted(keys(names)) {
		r, inRef := ref.Properties[n]
		g, inGot := got.Properties[n]
		switch {
		case !inRef:
			out = append(out, fmt.Sprintf("%s present: only in capstan", join(n)))
		case !inGot:
			out = append(out, fmt.Sprintf("%s present: only in the reference", join(n)))
		default:
			out = append(out, schemaDiff(join(n), &r, &g)...)
		}
	}
	var refItems, gotItems *apiextensionsv1.JSONSchemaProps
	if ref.Items != nil {
		refItems = ref.Items.Schema
	}
	if got.Items != nil {
		gotItems = got.Items.Schema
	}
	out = append(out, schemaDiff(path+"[]", refItems, gotItems)...)
	var refValues, gotValues *apiextensionsv1.JSONSchemaProps
	if ref.AdditionalProperties != nil {
		refValues = ref.AdditionalProperties.Schema
	}
	if got.AdditionalProperties != nil {
		gotValues = got.AdditionalProperties.Schema
	}
	return append(out, schemaDiff(path+"{}", refValues, gotValues)...)
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(b)
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	sort.Strings(out)
	return out
}
