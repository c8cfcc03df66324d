package ec2nodeclass

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
)

func TestResolveAMIs(t *testing.T) {
	hour := time.Hour
	amd, arm := ec2types.ArchitectureValuesX8664, ec2types.ArchitectureValuesArm64
	byTags := []awsv1.AMISelectorTerm{{Tags: map[string]string{"team": "ml"}}}
	terms := func(images ...ec2types.Image) []FoundImages { return []FoundImages{{Images: images}} }
	pending := image("ami-pending", "b", fakeAccount, amd, start)
	pending.State = ec2types.ImageStatePending
	undated := image("ami-undated", "z", fakeAccount, amd, start)
	undated.CreationDate = aws.String("yesterday")
	cases := []struct {
		name    string
		terms   []awsv1.AMISelectorTerm
		found   []FoundImages
		want    []string
		message string
	}{
		{"newest per architecture, newest first", byTags, terms(
			image("ami-1", "a", fakeAccount, amd, start.Add(-3*hour)),
			image("ami-2", "b", fakeAccount, amd, start.Add(-hour)),
			image("ami-3", "c", fakeAccount, arm, start.Add(-2*hour)),
			image("ami-4", "d", fakeAccount, arm, start.Add(-4*hour)),
		), []string{"ami-2/amd64", "ami-3/arm64"}, ""},
		{"the newest across terms", byTags, []FoundImages{
			{Images: []ec2types.Image{image("ami-1", "a", fakeAccount, amd, start.Add(-3*hour))}},
			{Images: []ec2types.Image{image("ami-2", "b", fakeAccount, amd, start.Add(-hour)), image("ami-1", "a", fakeAccount, amd, start.Add(-3*hour))}},
		}, []string{"ami-2/amd64"}, ""},
		{"same creation date: the greatest name", byTags, terms(
			image("ami-1", "release-2", fakeAccount, amd, start),
			image("ami-2", "release-1", fakeAccount, amd, start),
		), []string{"ami-1/amd64"}, ""},
		{"a deprecated image loses to an older one", byTags, terms(
			deprecated(image("ami-new", "a", fakeAccount, amd, start.Add(-hour)), start.Add(-time.Second)),
			image("ami-old", "b", fakeAccount, amd, start.Add(-9*hour)),
		), []string{"ami-old/amd64"}, ""},
		{"deprecation in the future is not yet", byTags, terms(
			deprecated(image("ami-new", "a", fakeAccount, amd, start.Add(-hour)), start.Add(time.Second)),
			image("ami-old", "b", fakeAccount, amd, start.Add(-9*hour)),
		), []string{"ami-new/amd64"}, ""},
		{"deprecated when nothing else matches, said so", byTags, terms(
			deprecated(image("ami-1", "a", fakeAccount, arm, start.Add(-2*hour)), start),
			deprecated(image("ami-2", "b", fakeAccount, arm, start.Add(-hour)), start),
		), []string{"ami-2/arm64(deprecated)"}, "using deprecated images ami-2: no other image matches their requirements"},
		{"pending, i386 and id-less images left out", byTags, terms(
			pending,
			image("ami-i386", "c", fakeAccount, ec2types.ArchitectureValuesI386, start),
			image("", "d", fakeAccount, amd, start),
			image("ami-ok", "e", fakeAccount, amd, start.Add(-hour)),
		), []string{"ami-ok/amd64"}, ""},
		{"an unparseable creation date is oldest", byTags, terms(undated, image("ami-dated", "a", fakeAccount, amd, start.Add(-99*hour))), []string{"ami-dated/amd64"}, ""},
		{"one image, two variants: two entries", []awsv1.AMISelectorTerm{{Alias: "al2@latest"}}, []FoundImages{{
			Query:  ImageQuery{Variants: variants(nvidia(), neuron())},
			Images: []ec2types.Image{image("ami-gpu", "amazon-eks-gpu-node-1.30-v1", "amazon", amd, start)},
		}}, []string{"ami-gpu/amd64/instance-accelerator-count-Exists", "ami-gpu/amd64/instance-gpu-count-Exists"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			amis, cond := resolveAMIs(tc.terms, tc.found, start)
			if diff := cmp.Diff(tc.want, amiIDs(awsv1.EC2NodeClassStatus{AMIs: amis})); diff != "" {
				t.Errorf("amis (-want +got):\n%s", diff)
			}
			want := metav1.Condition{Type: awsv1.ConditionTypeAMIsReady, Status: metav1.ConditionTrue, Reason: awsv1.ConditionTypeAMIsReady, Message: tc.message}
			if diff := cmp.Diff(want, cond); diff != "" {
				t.Errorf("condition (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResolveAMIsNoneFound(t *testing.T) {
	cases := []struct {
		name    string
		terms   []awsv1.AMISelectorTerm
		message string
	}{
		{"no terms", nil, "spec.amiSelectorTerms is empty"},
		{"nothing matches", []awsv1.AMISelectorTerm{{Name: "my-ami-*"}, {ID: "ami-1"}}, `no image matches amiSelectorTerms [{"name":"my-ami-*"},{"id":"ami-1"}]`},
		{"an ssmParameter term", []awsv1.AMISelectorTerm{{SSMParameter: "/my/ami"}},
			`no image matches amiSelectorTerms [{"ssmParameter":"/my/ami"}] (terms with an ssmParameter are not supported yet and select nothing)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Found images of an architecture Capstan never selects
			// count as none.
			amis, cond := resolveAMIs(tc.terms, []FoundImages{{Images: []ec2types.Image{image("ami-mac", "m", fakeAccount, ec2types.ArchitectureValuesArm64Mac, start)}}}, start)
			if amis != nil {
				t.Errorf("amis %v, want none", amis)
			}
			want := metav1.Condition{Type: awsv1.ConditionTypeAMIsReady, Status: metav1.ConditionFalse, Reason: ReasonAMINotFound, Message: tc.message}
			if diff := cmp.Diff(want, cond); diff != "" {
				t.Errorf("condition (-want +got):\n%s", diff)
			}
		})
	}
}

// The status shares nothing with the queries' variant requirements.
func TestResolveAMIsCopiesRequirements(t *testing.T) {
	found := []FoundImages{{Query: ImageQuery{Variants: variants(nvidia())}, Images: []ec2types.Image{
		image("ami-1", "a", "amazon", ec2types.ArchitectureValuesX8664, start)}}}
	amis, _ := resolveAMIs([]awsv1.AMISelectorTerm{{Alias: "al2023@latest"}}, found, start)
	amis[0].Requirements[1].Operator = corev1.NodeSelectorOpDoesNotExist
	if found[0].Query.Variants[0][0].Operator != corev1.NodeSelectorOpExists {
		t.Errorf("changing the status changed the query")
	}
}
