package iampolicy

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// policyTypes are the CloudFormation resource types that carry a policy
// document.
var policyTypes = []string{"AWS::IAM::ManagedPolicy", "AWS::IAM::Policy"}

// LoadTemplate reads the policies of a CloudFormation template: each
// policy resource's PolicyDocument, a !Sub string (or a plain mapping)
// whose ${NAME} are replaced with vars[NAME], as CloudFormation's Fn::Sub
// does with parameters and pseudo parameters. A variable vars lacks is an
// error, so a template never evaluates with a placeholder left in.
func LoadTemplate(data []byte, vars map[string]string) ([]Policy, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("parsing the template, %w", err)
	}
	if len(root.Content) == 0 {
		return nil, fmt.Errorf("the template is empty")
	}
	resources := child(root.Content[0], "Resources")
	if resources == nil {
		return nil, fmt.Errorf("the template has no Resources")
	}
	var out []Policy
	for i := 0; i+1 < len(resources.Content); i += 2 {
		name, res := resources.Content[i].Value, resources.Content[i+1]
		if t := child(res, "Type"); t == nil || !slices.Contains(policyTypes, t.Value) {
			continue
		}
		doc := child(child(res, "Properties"), "PolicyDocument")
		if doc == nil {
			return nil, fmt.Errorf("policy %s has no PolicyDocument", name)
		}
		text, err := documentText(doc)
		if err != nil {
			return nil, fmt.Errorf("policy %s, %w", name, err)
		}
		text, err = substitute(text, vars)
		if err != nil {
			return nil, fmt.Errorf("policy %s, %w", name, err)
		}
		p, err := Parse(name, []byte(text))
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the template has no %s resource", strings.Join(policyTypes, " or "))
	}
	return out, nil
}

// child is the value of key in a mapping node, nil without one.
func child(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// documentText is a PolicyDocument as JSON text: a !Sub string as it is,
// a mapping encoded.
func documentText(doc *yaml.Node) (string, error) {
	switch {
	case doc.Kind == yaml.ScalarNode && (doc.Tag == "!Sub" || doc.Tag == "!!str"):
		return doc.Value, nil
	case doc.Kind == yaml.MappingNode:
		var v any
		if err := doc.Decode(&v); err != nil {
			return "", fmt.Errorf("decoding the PolicyDocument, %w", err)
		}
		b, err := json.Marshal(v)
		return string(b), err
	}
	return "", fmt.Errorf("the PolicyDocument is neither a !Sub string nor a mapping (tag %s)", doc.Tag)
}

var subVar = regexp.MustCompile(`\$\{([^}]*)\}`)

// substitute replaces ${NAME} with vars[NAME] and ${!LITERAL} with
// ${LITERAL}, as Fn::Sub does.
func substitute(text string, vars map[string]string) (string, error) {
	var missing []string
	out := subVar.ReplaceAllStringFunc(text, func(m string) string {
		name := m[2 : len(m)-1]
		if lit, ok := strings.CutPrefix(name, "!"); ok {
			return "${" + lit + "}"
		}
		v, ok := vars[name]
		if !ok {
			missing = append(missing, name)
		}
		return v
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("no value for ${%s}", strings.Join(missing, "}, ${"))
	}
	return out, nil
}
