package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
	yaml "go.yaml.in/yaml/v3"

	"github.com/capstan-dev/capstan/test/ec2endpoint/iampolicy"
)

// repo is the repository's root, from this package's directory.
const repo = "../.."

// The concrete values both sides are evaluated with.
const (
	partition = "aws"
	region    = "us-west-2"
	account   = "111122223333"
	cluster   = "prod"
	queueArn  = "arn:aws:sqs:us-west-2:111122223333:prod"
)

// The generated files are what the template makes now.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	data := read(t, templatePath)
	policies, err := readPolicies(data)
	if err != nil {
		t.Fatal(err)
	}
	want, err := policyFile(policies)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, string(read(t, policyPath))); diff != "" {
		t.Errorf("%s is stale, run make generate (-want +got):\n%s", policyPath, diff)
	}
	for _, p := range policies {
		want, err := tfTemplate(p.Document)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, string(read(t, filepath.Join(tfPolicyDir, p.Resource+".json.tftpl")))); diff != "" {
			t.Errorf("the Terraform template of %s is stale, run make generate (-want +got):\n%s", p.Resource, diff)
		}
	}
}

// The local endpoint loads the generated policy file, and it allows and
// denies as the template's own policies do: the same statements.
func TestEnforcedPolicyIsTheTemplates(t *testing.T) {
	vars := map[string]string{"AWS::Partition": partition, "AWS::Region": region, "AWS::AccountId": account, "AWS::URLSuffix": "amazonaws.com",
		"ClusterName": cluster, "NodeRoleName": "KarpenterNodeRole-" + cluster, "InterruptionQueueName": cluster}
	enforced, err := iampolicy.LoadTemplate(read(t, policyPath), vars)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]any{}
	for _, p := range enforced {
		got[p.Name] = p
	}
	want := map[string]any{}
	policies, err := readPolicies(read(t, templatePath))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range policies {
		text, err := substitute(p.Document, vars)
		if err != nil {
			t.Fatal(err)
		}
		parsed, err := iampolicy.Parse(p.Resource, []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		want[p.Resource] = parsed
	}
	// Parse reads a statement's conditions from a map, in no order.
	byKey := cmpopts.SortSlices(func(a, b iampolicy.Condition) bool { return a.Operator+a.Key < b.Operator+b.Key })
	if diff := cmp.Diff(want, got, byKey); diff != "" {
		t.Errorf("enforced policies (-template +enforced):\n%s", diff)
	}
}

// The Terraform module makes what the CloudFormation template makes:
// the same node role and managed policies, queue, queue policy, rules
// (each with its target) and controller policy documents, each side
// evaluated with the same cluster, account and region.
func TestTerraformMakesWhatTheTemplateMakes(t *testing.T) {
	cfn := cfnResources(t)
	tf := evalTerraform(t)
	if diff := cmp.Diff(cfn, tf); diff != "" {
		t.Errorf("CloudFormation vs Terraform (-cloudformation +terraform):\n%s", diff)
	}
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repo, path))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// made is what either side makes, in common terms.
type made struct {
	NodeRole       string
	NodeTrust      any
	NodePolicies   []string
	Queue          string
	QueueRetention float64
	QueueSSE       bool
	QueuePolicy    any
	// Rules are each rule's event pattern (JSON) and target, sorted.
	Rules            []string
	ControllerPolicy map[string]any // by name
}

var cfnSub = regexp.MustCompile(`\$\{([^}]*)\}`)

// substitute is Fn::Sub with vars.
func substitute(text string, vars map[string]string) (string, error) {
	var missing []string
	out := cfnSub.ReplaceAllStringFunc(text, func(m string) string {
		v, ok := vars[m[2:len(m)-1]]
		if !ok {
			missing = append(missing, m)
		}
		return v
	})
	if len(missing) > 0 {
		return "", &missingError{missing}
	}
	return out, nil
}

type missingError struct{ names []string }

func (e *missingError) Error() string { return "no value for " + strings.Join(e.names, ", ") }

// cfnValue is a template node as plain data: !Sub substituted, !Ref and
// !GetAtt looked up in vars, numbers as float64.
func cfnValue(t *testing.T, n *yaml.Node, vars map[string]string) any {
	t.Helper()
	switch n.Kind {
	case yaml.MappingNode:
		out := map[string]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			out[n.Content[i].Value] = cfnValue(t, n.Content[i+1], vars)
		}
		return out
	case yaml.SequenceNode:
		if n.Tag == "!Sub" {
			t.Fatalf("line %d: the list form of !Sub is only for policy documents here", n.Line)
		}
		var out []any
		for _, c := range n.Content {
			out = append(out, cfnValue(t, c, vars))
		}
		return out
	}
	switch n.Tag {
	case "!Sub":
		s, err := substitute(n.Value, vars)
		if err != nil {
			t.Fatalf("line %d: %v", n.Line, err)
		}
		return s
	case "!Ref", "!GetAtt":
		v, ok := vars[n.Value]
		if !ok {
			t.Fatalf("line %d: no value for %s %s", n.Line, n.Tag, n.Value)
		}
		return v
	}
	var v any
	if err := n.Decode(&v); err != nil {
		t.Fatal(err)
	}
	if i, ok := v.(int); ok {
		return float64(i)
	}
	return v
}

func cfnResources(t *testing.T) made {
	var root yaml.Node
	if err := yaml.Unmarshal(read(t, templatePath), &root); err != nil {
		t.Fatal(err)
	}
	resources := child(root.Content[0], "Resources")
	vars := map[string]string{"AWS::Partition": partition, "AWS::Region": region, "AWS::AccountId": account, "AWS::URLSuffix": "amazonaws.com",
		"ClusterName": cluster, "InterruptionQueue.Arn": queueArn}
	props := func(id string) *yaml.Node {
		p := child(child(resources, id), "Properties")
		if p == nil {
			t.Fatalf("no resource %s", id)
		}
		return p
	}
	var m made
	role := props("NodeRole")
	m.NodeRole = cfnValue(t, child(role, "RoleName"), vars).(string)
	vars["NodeRole"] = m.NodeRole
	m.NodeTrust = cfnValue(t, child(role, "AssumeRolePolicyDocument"), vars)
	for _, arn := range cfnValue(t, child(role, "ManagedPolicyArns"), vars).([]any) {
		m.NodePolicies = append(m.NodePolicies, arn.(string))
	}
	queue := props("InterruptionQueue")
	m.Queue = cfnValue(t, child(queue, "QueueName"), vars).(string)
	vars["InterruptionQueue"], vars["InterruptionQueue.QueueName"] = "https://queue/"+m.Queue, m.Queue
	m.QueueRetention = cfnValue(t, child(queue, "MessageRetentionPeriod"), vars).(float64)
	m.QueueSSE = cfnValue(t, child(queue, "SqsManagedSseEnabled"), vars).(bool)
	m.QueuePolicy = cfnValue(t, child(props("InterruptionQueuePolicy"), "PolicyDocument"), vars)
	m.ControllerPolicy = map[string]any{}
	for i := 0; i+1 < len(resources.Content); i += 2 {
		id, res := resources.Content[i].Value, resources.Content[i+1]
		switch child(res, "Type").Value {
		case "AWS::Events::Rule":
			p := child(res, "Properties")
			pattern := jsonText(t, cfnValue(t, child(p, "EventPattern"), vars))
			for _, target := range cfnValue(t, child(p, "Targets"), vars).([]any) {
				tg := target.(map[string]any)
				m.Rules = append(m.Rules, pattern+" to "+tg["Id"].(string)+" "+tg["Arn"].(string))
			}
		case "AWS::IAM::ManagedPolicy":
			p := child(res, "Properties")
			name := cfnValue(t, child(p, "ManagedPolicyName"), vars).(string)
			doc := child(p, "PolicyDocument")
			local := map[string]string{}
			for k, v := range vars {
				local[k] = v
			}
			text := doc.Value
			if doc.Kind == yaml.SequenceNode {
				text = doc.Content[0].Value
				own := doc.Content[1]
				for j := 0; j+1 < len(own.Content); j += 2 {
					local[own.Content[j].Value] = cfnValue(t, own.Content[j+1], vars).(string)
				}
			}
			s, err := substitute(text, local)
			if err != nil {
				t.Fatalf("policy %s: %v", id, err)
			}
			m.ControllerPolicy[name] = jsonValue(t, s)
		}
	}
	slices.Sort(m.Rules)
	return m
}

// jsonText is v as JSON, its keys sorted.
func jsonText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func jsonValue(t *testing.T, text string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		t.Fatalf("%v: %s", err, text)
	}
	return v
}

// tfModule is deploy/aws/terraform's main.tf, parsed.
type tfModule struct {
	resources map[string]map[string]*hclsyntax.Body // type, name
	locals    hclsyntax.Attributes
	dir       string
}

func parseTerraform(t *testing.T) tfModule {
	dir := filepath.Join(repo, "deploy/aws/terraform")
	src, err := os.ReadFile(filepath.Join(dir, "main.tf"))
	if err != nil {
		t.Fatal(err)
	}
	file, diags := hclsyntax.ParseConfig(src, "main.tf", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	m := tfModule{resources: map[string]map[string]*hclsyntax.Body{}, dir: dir}
	for _, b := range file.Body.(*hclsyntax.Body).Blocks {
		switch {
		case b.Type == "resource" && len(b.Labels) == 2:
			if m.resources[b.Labels[0]] == nil {
				m.resources[b.Labels[0]] = map[string]*hclsyntax.Body{}
			}
			m.resources[b.Labels[0]][b.Labels[1]] = b.Body
		case b.Type == "locals":
			m.locals = b.Body.Attributes
		}
	}
	return m
}

// templatefile is Terraform's: the file rendered as a template with the
// object's attributes as its variables.
var templatefile = function.New(&function.Spec{
	Params: []function.Parameter{{Name: "path", Type: cty.String}, {Name: "vars", Type: cty.DynamicPseudoType}},
	Type:   function.StaticReturnType(cty.String),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		src, err := os.ReadFile(args[0].AsString())
		if err != nil {
			return cty.NilVal, err
		}
		tmpl, diags := hclsyntax.ParseTemplate(src, args[0].AsString(), hcl.InitialPos)
		if diags.HasErrors() {
			return cty.NilVal, diags
		}
		v, diags := tmpl.Value(&hcl.EvalContext{Variables: args[1].AsValueMap()})
		if diags.HasErrors() {
			return cty.NilVal, diags
		}
		return v, nil
	},
})

func evalTerraform(t *testing.T) made {
	mod := parseTerraform(t)
	ctx := &hcl.EvalContext{
		Variables: map[string]cty.Value{
			"var":  cty.ObjectVal(map[string]cty.Value{"cluster_name": cty.StringVal(cluster)}),
			"path": cty.ObjectVal(map[string]cty.Value{"module": cty.StringVal(mod.dir)}),
			"data": cty.ObjectVal(map[string]cty.Value{
				"aws_partition":       obj("current", cty.ObjectVal(map[string]cty.Value{"partition": cty.StringVal(partition), "dns_suffix": cty.StringVal("amazonaws.com")})),
				"aws_region":          obj("current", obj("name", cty.StringVal(region))),
				"aws_caller_identity": obj("current", obj("account_id", cty.StringVal(account))),
			}),
		},
		Functions: map[string]function.Function{"jsonencode": stdlib.JSONEncodeFunc, "templatefile": templatefile},
	}
	attr := func(typ, name, key string) hclsyntax.Expression {
		body := mod.resources[typ][name]
		if body == nil || body.Attributes[key] == nil {
			t.Fatalf("no %s.%s with %s", typ, name, key)
		}
		return body.Attributes[key].Expr
	}
	eval := func(e hclsyntax.Expression) cty.Value {
		v, diags := e.Value(ctx)
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		return v
	}
	var m made
	m.NodeRole = eval(attr("aws_iam_role", "node", "name")).AsString()
	m.Queue = eval(attr("aws_sqs_queue", "interruption", "name")).AsString()
	ctx.Variables["aws_iam_role"] = obj("node", obj("name", cty.StringVal(m.NodeRole)))
	ctx.Variables["aws_sqs_queue"] = obj("interruption", cty.ObjectVal(map[string]cty.Value{
		"name": cty.StringVal(m.Queue), "arn": cty.StringVal(queueArn), "url": cty.StringVal("https://queue/" + m.Queue)}))
	locals := map[string]cty.Value{}
	for name, a := range mod.locals {
		locals[name] = eval(a.Expr)
	}
	ctx.Variables["local"] = cty.ObjectVal(locals)

	m.NodeTrust = jsonValue(t, eval(attr("aws_iam_role", "node", "assume_role_policy")).AsString())
	// for_each over the local list: policy_arn for each value.
	if eval(attr("aws_iam_role_policy_attachment", "node", "role")).AsString() != m.NodeRole {
		t.Error("the node policies are attached to another role")
	}
	for _, p := range locals["node_managed_policies"].AsValueSlice() {
		ctx.Variables["each"] = obj("value", p)
		m.NodePolicies = append(m.NodePolicies, eval(attr("aws_iam_role_policy_attachment", "node", "policy_arn")).AsString())
	}
	delete(ctx.Variables, "each")
	retention, _ := eval(attr("aws_sqs_queue", "interruption", "message_retention_seconds")).AsBigFloat().Float64()
	m.QueueRetention = retention
	m.QueueSSE = eval(attr("aws_sqs_queue", "interruption", "sqs_managed_sse_enabled")).True()
	if eval(attr("aws_sqs_queue_policy", "interruption", "queue_url")).AsString() != "https://queue/"+m.Queue {
		t.Error("the queue policy is another queue's")
	}
	m.QueuePolicy = jsonValue(t, eval(attr("aws_sqs_queue_policy", "interruption", "policy")).AsString())

	// The rules, one per for_each entry, and their targets, one per rule.
	patterns, rules := map[string]string{}, map[string]cty.Value{}
	for key, value := range eval(attr("aws_cloudwatch_event_rule", "interruption", "for_each")).AsValueMap() {
		ctx.Variables["each"] = cty.ObjectVal(map[string]cty.Value{"key": cty.StringVal(key), "value": value})
		patterns["rule/"+key] = jsonText(t, jsonValue(t, eval(attr("aws_cloudwatch_event_rule", "interruption", "event_pattern")).AsString()))
		rules[key] = obj("name", cty.StringVal("rule/"+key))
	}
	ctx.Variables["aws_cloudwatch_event_rule"] = obj("interruption", cty.ObjectVal(rules))
	for key, value := range eval(attr("aws_cloudwatch_event_target", "interruption", "for_each")).AsValueMap() {
		ctx.Variables["each"] = cty.ObjectVal(map[string]cty.Value{"key": cty.StringVal(key), "value": value})
		rule := eval(attr("aws_cloudwatch_event_target", "interruption", "rule")).AsString()
		pattern, ok := patterns[rule]
		if !ok {
			t.Fatalf("target %s points at %s, no rule", key, rule)
		}
		m.Rules = append(m.Rules, pattern+" to "+eval(attr("aws_cloudwatch_event_target", "interruption", "target_id")).AsString()+" "+
			eval(attr("aws_cloudwatch_event_target", "interruption", "arn")).AsString())
	}
	delete(ctx.Variables, "each")
	slices.Sort(m.Rules)
	m.ControllerPolicy = map[string]any{}
	for name := range mod.resources["aws_iam_policy"] {
		m.ControllerPolicy[eval(attr("aws_iam_policy", name, "name")).AsString()] = jsonValue(t, eval(attr("aws_iam_policy", name, "policy")).AsString())
	}
	return m
}

func obj(key string, v cty.Value) cty.Value { return cty.ObjectVal(map[string]cty.Value{key: v}) }
