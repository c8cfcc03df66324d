package test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

func rules(names ...string) []apiextensionsv1.ValidationRule {
	out := make([]apiextensionsv1.ValidationRule, 0, len(names))
	for _, n := range names {
		out = append(out, apiextensionsv1.ValidationRule{Rule: n, Message: "violates " + n})
	}
	return out
}

func crdOf(schemas ...*apiextensionsv1.JSONSchemaProps) *apiextensionsv1.CustomResourceDefinition {
	c := &apiextensionsv1.CustomResourceDefinition{}
	for _, s := range schemas {
		c.Spec.Versions = append(c.Spec.Versions, apiextensionsv1.CustomResourceDefinitionVersion{
			Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: s},
		})
	}
	return c
}

func TestCELRules(t *testing.T) {
	nested := &apiextensionsv1.JSONSchemaProps{
		Type:         "object",
		XValidations: rules("root"),
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"spec": {
				Type:         "object",
				XValidations: rules("spec-1", "spec-2"),
				Properties: map[string]apiextensionsv1.JSONSchemaProps{
					"list": {
						Type: "array",
						Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{
							Type:         "object",
							XValidations: rules("item"),
							Properties: map[string]apiextensionsv1.JSONSchemaProps{
								"name": {Type: "string", XValidations: rules("item-name")},
							},
						}},
					},
					"tags": {
						Type: "object",
						AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true, Schema: &apiextensionsv1.JSONSchemaProps{
							Type:         "string",
							XValidations: rules("tag-value"),
						}},
					},
					"anything": {
						Type:                 "object",
						AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true},
					},
					"plain": {Type: "string"},
				},
			},
			"status": {Type: "object"},
		},
	}
	cases := []struct {
		name string
		crd  *apiextensionsv1.CustomResourceDefinition
		want []apiextensionsv1.ValidationRule
	}{
		{name: "no versions", crd: crdOf()},
		{name: "a schema without rules", crd: crdOf(&apiextensionsv1.JSONSchemaProps{Type: "object"})},
		{name: "a version without an OpenAPI schema", crd: crdOf(nil)},
		{
			name: "properties, items and additional properties, at any depth",
			crd:  crdOf(nested),
			want: rules("root", "spec-1", "spec-2", "item", "item-name", "tag-value"),
		},
		{
			name: "every version",
			crd:  crdOf(nested, &apiextensionsv1.JSONSchemaProps{Type: "object", XValidations: rules("v2")}),
			want: rules("root", "spec-1", "spec-2", "item", "item-name", "tag-value", "v2"),
		},
	}
	byRule := cmpopts.SortSlices(func(a, b apiextensionsv1.ValidationRule) bool { return a.Rule < b.Rule })
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, CELRules(tc.crd), byRule, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("CELRules (-want +got):\n%s", diff)
			}
		})
	}
}
