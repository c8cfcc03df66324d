package iampolicy

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The expected answers come from AWS's documentation of policy
// evaluation, not from any caller's requests:
//
//	[logic]  https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_evaluation-logic.html
//	[ops]    https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_condition_operators.html
//	[multi]  https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_condition-single-vs-multi-valued-context-keys.html
//	[action] https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_action.html
//	[notact] https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_notaction.html
//	[res]    https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_resource.html
//	[cond]   https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_condition.html
//	[tags]   https://docs.aws.amazon.com/IAM/latest/UserGuide/access_tags.html
//	[keys]   https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_condition-keys.html
//	         (aws:RequestTag/tag-key, aws:ResourceTag/tag-key: "Tag key names are
//	         case-insensitive ... matches ... either TagKey1 or tagkey1, but not both")

const instanceARN = "arn:aws:ec2:us-west-2:111122223333:instance/i-0123"

func TestEvaluate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy string
		req    Request
		want   Decision
	}{{
		name:   "[logic] an allowing statement allows",
		policy: `{"Statement":{"Effect":"Allow","Action":"ec2:TerminateInstances","Resource":"*"}}`,
		req:    Request{Action: "ec2:TerminateInstances", Resources: []Resource{{ARN: instanceARN}}},
		want:   Decision{Allowed: true},
	}, {
		name:   "[logic] nothing allows: implicit deny",
		policy: `{"Statement":{"Effect":"Allow","Action":"ec2:DescribeInstances","Resource":"*"}}`,
		req:    Request{Action: "ec2:TerminateInstances", Resources: []Resource{{ARN: instanceARN}}},
		want:   Decision{Resource: instanceARN},
	}, {
		name: "[logic] an explicit deny overrides any allow",
		policy: `{"Statement":[{"Effect":"Allow","Action":"ec2:*","Resource":"*"},
			{"Sid":"NoTerminate","Effect":"Deny","Action":"ec2:TerminateInstances","Resource":"*"}]}`,
		req:  Request{Action: "ec2:TerminateInstances", Resources: []Resource{{ARN: instanceARN}}},
		want: Decision{ExplicitDeny: true, Resource: instanceARN, Statement: "NoTerminate"},
	}, {
		name:   "[logic] every resource must be allowed",
		policy: `{"Statement":{"Effect":"Allow","Action":"ec2:RunInstances","Resource":"arn:aws:ec2:*:*:instance/*"}}`,
		req: Request{Action: "ec2:RunInstances", Resources: []Resource{{ARN: instanceARN},
			{ARN: "arn:aws:ec2:us-west-2:111122223333:subnet/subnet-1"}}},
		want: Decision{Resource: "arn:aws:ec2:us-west-2:111122223333:subnet/subnet-1"},
	}, {
		name:   "[action] action names are case-insensitive and take * and ?",
		policy: `{"Statement":{"Effect":"Allow","Action":"EC2:describe?nstance*","Resource":"*"}}`,
		req:    Request{Action: "ec2:DescribeInstanceTypes", Resources: []Resource{{ARN: "*"}}},
		want:   Decision{Allowed: true},
	}, {
		name:   "[notact] NotAction allows every other action",
		policy: `{"Statement":{"Effect":"Allow","NotAction":"iam:*","Resource":"*"}}`,
		req:    Request{Action: "ec2:CreateFleet", Resources: []Resource{{ARN: "*"}}},
		want:   Decision{Allowed: true},
	}, {
		name:   "[notact] NotAction does not allow the listed action",
		policy: `{"Statement":{"Effect":"Allow","NotAction":"iam:*","Resource":"*"}}`,
		req:    Request{Action: "iam:PassRole", Resources: []Resource{{ARN: "*"}}},
		want:   Decision{Resource: "*"},
	}, {
		name:   "[res] a wildcard does not reach across ARN segments",
		policy: `{"Statement":{"Effect":"Allow","Action":"ec2:RunInstances","Resource":"arn:aws:ec2:us-west-2::image/*"}}`,
		req:    Request{Action: "ec2:RunInstances", Resources: []Resource{{ARN: "arn:aws:ec2:us-west-2:111122223333:image/ami-1"}}},
		want:   Decision{Resource: "arn:aws:ec2:us-west-2:111122223333:image/ami-1"},
	}, {
		name:   "[res] NotResource covers every other resource",
		policy: `{"Statement":{"Effect":"Allow","Action":"ec2:RunInstances","NotResource":"arn:aws:ec2:*:*:subnet/*"}}`,
		req:    Request{Action: "ec2:RunInstances", Resources: []Resource{{ARN: instanceARN}}},
		want:   Decision{Allowed: true},
	}, {
		name:   "[ops] StringEquals on a request tag",
		policy: `{"Statement":{"Effect":"Allow","Action":"ec2:RunInstances","Resource":"*","Condition":{"StringEquals":{"aws:RequestTag/team":"a"}}}}`,
		req:    Request{Action: "ec2:RunInstances", Resources: []Resource{{ARN: instanceARN, RequestTags: map[string]string{"team": "a"}}}},
		want:   Decision{Allowed: true},
	}, {
		name:   "[ops] StringEquals is case-sensitive in its values",
		policy: `{"Statement":{"Effect":"Allow","Action":"ec2:RunInstances","Resource":"*","Condition":{"StringEquals":{"aws:RequestTag/team":"a"}}}}`,
		req:    Request{Action: "ec2:RunInstances", Resources: []Resource{{ARN: instanceARN, RequestTags: map[string]string{"team": "A"}}}},
		want:   Decision{Resource: instanceARN},
	}, {
		name:   "[cond] condition key names are case-insensitive",
		policy: `{"Statement":{"Effect":"Allow","Action":"ec2:RunInstances","Resource":"*","Condition":{"StringEquals":{"AWS:REQUESTTAG/Team":"a"}}}}`,
		req:    Request{Action: "ec2:RunInstances", Resources: []Resource{{ARN: instanceARN, RequestTags: map[string]string{"team": "a"}}}},
		want:   Decision{Allowed: true},
	}, {
		name:   "[keys] a request tag key matches in any case",
		policy: `{"Statement":{"Effect":"Allow","Action":"ec2:RunInstances","Resource":"*","Condition":{"StringEquals":{"aws:RequestTag/TagKey1":"a"}}}}`,
		req:    Request{Action: "ec2:RunInstances", Resources: []Resource{{ARN: instanceARN, RequestTags: map[string]string{"tagkey1": "a"}}}},
		want:   Decision{Allowed: true},
	}, {
		name:   "[keys] request tags differing only in case match neither: TagKey1 or tagkey1, but not both",
		policy: `{"Statement":{"Effect":"Allow","Action":"ec2:RunInstances","Resource":"*","Condition":{"StringEquals":{"aws:RequestTag/TagKey1":"a"}}}}`,
		req:    Request{Action: "ec2:RunInstances", Resources: []Resource{{ARN: instanceARN, RequestTags: map[string]string{"TagKey1": "a", "tagkey1": "a"}}}},
		want:   Decision{Resource: instanceARN},
	}, {
		name:   "[keys] resource tags differing only in case match neither, so a Null check finds the key absent",
		policy: `{"Statement":{"Effect":"Allow","Action":"ec2:TerminateInstances","Resource":"*","Condition":{"Null":{"aws:ResourceTag/TagKey1":"false"}}}}`,
		req:    Request{Action: "ec2:TerminateInstances", Resources: []Resource{{ARN: instanceARN, Tags: map[string]string{"TagKey1": "a", "tagkey1": "b"}}}},
		want:   Decision{Resource: instanceARN},
	}, {
		name:   "[keys] aws:TagKeys still lists both keys as the request spells them",
		policy: `{"Statement":{"Effect":"Allow","Action":"ec2:RunInstances","Resource":"*","Condition":{"ForAllValues:StringEquals":{"aws:TagKeys":["TagKey1","tagkey1"]}}}}`,
		req:    Request{Action: "ec2:RunInstances", Resources: []Resource{{ARN: instanceARN, RequestTags: map[string]string{"TagKey1": "a", "tagkey1": "a"}}}},
		want:   Decision{Allowed: true},
	}, {
		name:   "[cond] values of one key are ORed",
		policy: `{"Statement":{"Effect":"Allow","Action":"ec2:CreateTags","Resource":"*","Condition":{"StringEquals":{"ec2:CreateAction":["RunInstances","CreateFleet"]}}}}`,
		req:    Request{Action: "ec2:CreateTags", Resources: []Resource{{ARN: instanceARN}}, Context: map[string][]string{"ec2:CreateAction": {"CreateFleet"}}},
		want:   Decision{Allowed: true},
	}, {
		name: "[cond] keys of one operator are ANDed",
		policy: `{"Statement":{"Effect":"Allow","Action":"ec2:RunInstances","Resource":"*","Condition":{
			"StringEquals":{"aws:RequestTag/a":"1","aws:RequestTag/b":"2"}}}}`,
		req:  Request{Action: "ec2:RunInstances", Resources: []Resource{{ARN: instanceARN, RequestTags: map[string]string{"a": "1", "b": "3"}}}},
		want: Decision{Resource: instanceARN},
	}, {
		name: "[cond] operators of one block are ANDed",
		policy: `{"Statement":{"Effect":"Allow","Action":"ec2:RunInstances","Resource":"*","Condition":{
			"StringEquals":{"aws:RequestTag/a":"1"},"StringLike":{"aws:RequestTag/b":"*"}}}}`,
		req:  Request{Action: "ec2:RunInstances", Resources: []Resource{{ARN: instanceARN, RequestTags: map[string]string{"a": "1"}}}},
		want: Decision{Resource: instanceARN},
	}, {
		name:   "[ops] StringLike * matches any value, also the empty one",
		policy: `{"Statement":{"Effect":"Allow","Action":"ec2:TerminateInstances","Resource":"*","Condition":{"StringLike":{"aws:ResourceTag/pool":"*"}}}}`,
		req:    Request{Action: "ec2:TerminateInstances", Resources: []Resource{{ARN: instanceARN, Tags: map[string]string{"pool": ""}}}},
		want:   Decision{Allowed: true},
	}, {
		name:   "[ops] StringLike ? matches exactly one character",
		policy: `{"Statement":{"Effect":"Allow","Action":"ec2:TerminateInstances","Resource":"*","Condition":{"StringLike":{"aws:ResourceTag/pool":"p?"}}}}`,
		req:    Request{Action: "ec2:TerminateInstances", Resources: []Resource{{ARN: instanceARN, Tags: map[string]string{"pool": "p12"}}}},
		want:   Decision{Resource: instanceARN},
	}, {
		name:   "[ops] a positive operator on a missing key is false",
		policy: `{"Statement":{"Effect":"Allow","Action":"ec2:TerminateInstances","Resource":"*","Condition":{"StringLike":{"aws:ResourceTag/pool":"*"}}}}`,
		req:    Request{Action: "ec2:TerminateInstances", Resources: []Resource{{ARN: instanceARN}}},
		want:   Decision{Resource: instanceARN},
	}, {
		name:   "[ops] a negated operator on a missing key is true",
		policy: `{"Statement":{"Effect":"Allow","Action":"ec2:TerminateInstances","Resource":"*","Condition":{"StringNotEquals":{"aws:ResourceTag/pool":"x"}}}}`,
		req:    Request{Action: "ec2:TerminateInstances", Resources: []Resource{{ARN: instanceARN}}},
		want:   Decision{Allowed: true},
	}, {
		name:   "[ops] StringNotEquals is false when the value is listed",
		policy: `{"Statement":{"Effect":"Allow","Action":"ec2:TerminateInstances","Resource":"*","Condition":{"StringNotEquals":{"aws:ResourceTag/pool":["x","y"]}}}}`,
		req:    Request{Action: "ec2:TerminateInstances", Resources: []Resource{{ARN: instanceARN, Tags: map[string]string{"pool": "y"}}}},
		want:   Decision{Resource: instanceARN},
	}, {
		name:   "[ops] ...IfExists holds when the key is missing",
		policy: `{"Statement":{"Effect":"Allow","Action":"ec2:CreateTags","Resource":"*","Condition":{"StringEqualsIfExists":{"aws:RequestTag/eks:eks-cluster-name":"c"}}}}`,
		req:    Request{Action: "ec2:CreateTags", Resources: []Resource{{ARN: instanceARN, RequestTags: map[string]string{"Name": "n"}}}},
		want:   Decision{Allowed: true},
	}, {
		name:   "[ops] ...IfExists still compares a present key",
		policy: `{"Statement":{"Effect":"Allow","Action":"ec2:CreateTags","Resource":"*","Condition":{"StringEqualsIfExists":{"aws:RequestTag/eks:eks-cluster-name":"c"}}}}`,
		req:    Request{Action: "ec2:CreateTags", Resources: []Resource{{ARN: instanceARN, RequestTags: map[string]string{"eks:eks-cluster-name": "other"}}}},
		want:   Decision{Resource: instanceARN},
	}, {
		name:   "[ops] Null true: the key is absent",
		policy: `{"Statement":{"Effect":"Allow","Action":"ec2:RunInstances","Resource":"*","Condition":{"Null":{"aws:RequestTag/owner":"true"}}}}`,
		req:    Request{Action: "ec2:RunInstances", Resources: []Resource{{ARN: instanceARN, RequestTags: map[string]string{"owner": "x"}}}},
		want:   Decision{Resource: instanceARN},
	}, {
		name:   "[ops] Null false: the key is present",
		policy: `{"Statement":{"Effect":"Allow","Action":"ec2:RunInstances","Resource":"*","Condition":{"Null":{"aws:RequestTag/owner":"false"}}}}`,
		req:    Request{Action: "ec2:RunInstances", Resources: []Resource{{ARN: instanceARN, RequestTags: map[string]string{"owner": "x"}}}},
		want:   Decision{Allowed: true},
	}, {
		name:   "[multi] ForAllValues holds on an empty set",
		policy: `{"Statement":{"Effect":"Allow","Action":"ec2:CreateTags","Resource":"*","Condition":{"ForAllValues:StringEquals":{"aws:TagKeys":["Name"]}}}}`,
		req:    Request{Action: "ec2:CreateTags", Resources: []Resource{{ARN: instanceARN}}},
		want:   Decision{Allowed: true},
	}, {
		name:   "[multi] ForAllValues fails when one key is not listed",
		policy: `{"Statement":{"Effect":"Allow","Action":"ec2:CreateTags","Resource":"*","Condition":{"ForAllValues:StringEquals":{"aws:TagKeys":["Name","team"]}}}}`,
		req:    Request{Action: "ec2:CreateTags", Resources: []Resource{{ARN: instanceARN, RequestTags: map[string]string{"Name": "n", "cost": "x"}}}},
		want:   Decision{Resource: instanceARN},
	}, {
		name:   "[multi] ForAllValues holds when every key is listed",
		policy: `{"Statement":{"Effect":"Allow","Action":"ec2:CreateTags","Resource":"*","Condition":{"ForAllValues:StringEquals":{"aws:TagKeys":["Name","team"]}}}}`,
		req:    Request{Action: "ec2:CreateTags", Resources: []Resource{{ARN: instanceARN, RequestTags: map[string]string{"Name": "n"}}}},
		want:   Decision{Allowed: true},
	}, {
		name:   "[multi] ForAnyValue is false on an empty set",
		policy: `{"Statement":{"Effect":"Allow","Action":"ec2:CreateTags","Resource":"*","Condition":{"ForAnyValue:StringEquals":{"aws:TagKeys":["Name"]}}}}`,
		req:    Request{Action: "ec2:CreateTags", Resources: []Resource{{ARN: instanceARN}}},
		want:   Decision{Resource: instanceARN},
	}, {
		name:   "[multi] ForAnyValue holds when one value matches",
		policy: `{"Statement":{"Effect":"Allow","Action":"ec2:CreateTags","Resource":"*","Condition":{"ForAnyValue:StringLike":{"aws:TagKeys":["kubernetes.io/*"]}}}}`,
		req:    Request{Action: "ec2:CreateTags", Resources: []Resource{{ARN: instanceARN, RequestTags: map[string]string{"Name": "n", "kubernetes.io/cluster/c": "owned"}}}},
		want:   Decision{Allowed: true},
	}, {
		name: "[logic] a Deny with a condition that does not hold denies nothing",
		policy: `{"Statement":[{"Effect":"Allow","Action":"ec2:RunInstances","Resource":"*"},
			{"Effect":"Deny","Action":"ec2:RunInstances","Resource":"*","Condition":{"StringNotEquals":{"aws:RequestedRegion":"us-west-2"}}}]}`,
		req:  Request{Action: "ec2:RunInstances", Resources: []Resource{{ARN: instanceARN}}, Context: map[string][]string{"aws:RequestedRegion": {"us-west-2"}}},
		want: Decision{Allowed: true},
	}, {
		name:   "[tags] a request tag is not a resource tag",
		policy: `{"Statement":{"Effect":"Allow","Action":"ec2:RunInstances","Resource":"*","Condition":{"StringEquals":{"aws:ResourceTag/team":"a"}}}}`,
		req:    Request{Action: "ec2:RunInstances", Resources: []Resource{{ARN: instanceARN, RequestTags: map[string]string{"team": "a"}}}},
		want:   Decision{Resource: instanceARN},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse("test", []byte(tc.policy))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, Evaluate([]Policy{p}, tc.req)); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
		})
	}
}
