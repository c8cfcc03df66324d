package test

import apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

// CELRules lists every x-kubernetes-validations rule in a CRD's schemas.
func CELRules(c *apiextensionsv1.CustomResourceDefinition) []apiextensionsv1.ValidationRule {
	var rules []apiextensionsv1.ValidationRule
	var walk func(s *apiextensionsv1.JSONSchemaProps)
	walk = func(s *apiextensionsv1.JSONSchemaProps) {
		if s == nil {
			return
		}
		rules = append(rules, s.XValidations...)
		for _, p := range s.Properties {
			walk(&p)
		}
		if s.Items != nil {
			walk(s.Items.Schema)
		}
		if s.AdditionalProperties != nil {
			walk(s.AdditionalProperties.Schema)
		}
	}
	for _, v := range c.Spec.Versions {
		walk(v.Schema.OpenAPIV3Schema)
	}
	return rules
}
