package iampolicy

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLoadTemplate(t *testing.T) {
	tmpl := `
Parameters:
  ClusterName: {Type: String}
Resources:
  Role: {Type: "AWS::IAM::Role"}
  P:
    Type: AWS::IAM::ManagedPolicy
    Properties:
      PolicyDocument: !Sub |
        {"Statement": {"Sid": "S", "Effect": "Allow", "Action": "ec2:RunInstances",
          "Resource": "arn:${AWS::Partition}:ec2:${AWS::Region}:*:instance/*",
          "Condition": {"StringEquals": {"aws:RequestTag/kubernetes.io/cluster/${ClusterName}": "owned", "x": "${!Literal}"}}}}
`
	got, err := LoadTemplate([]byte(tmpl), map[string]string{"AWS::Partition": "aws", "AWS::Region": "us-west-2", "ClusterName": "c"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Policy{{Name: "P", Statements: []Statement{{Sid: "S", Effect: Allow, Action: []string{"ec2:RunInstances"},
		Resource: []string{"arn:aws:ec2:us-west-2:*:instance/*"},
		Condition: []Condition{
			{Operator: "StringEquals", Key: "aws:RequestTag/kubernetes.io/cluster/c", Values: []string{"owned"}},
			{Operator: "StringEquals", Key: "x", Values: []string{"${Literal}"}},
		}}}}}
	sortConditions(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("policies (-want +got):\n%s", diff)
	}
	if _, err := LoadTemplate([]byte(tmpl), map[string]string{"AWS::Partition": "aws"}); err == nil {
		t.Error("a template with unresolved variables loaded")
	}
}

func sortConditions(ps []Policy) {
	for _, p := range ps {
		for _, s := range p.Statements {
			slices.SortFunc(s.Condition, func(a, b Condition) int { return strings.Compare(a.Key, b.Key) })
		}
	}
}
