package ec2nodeclass

import (
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/google/go-cmp/cmp"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
)

// filtersText is filters as "name=v1,v2 name=v".
func filtersText(filters []ec2types.Filter) string {
	var parts []string
	for _, f := range filters {
		parts = append(parts, aws.ToString(f.Name)+"="+strings.Join(f.Values, ","))
	}
	return strings.Join(parts, " ")
}

func TestSubnetQueries(t *testing.T) {
	got := []string{}
	for _, q := range SubnetQueries([]awsv1.SubnetSelectorTerm{
		{ID: "subnet-1"},
		{Tags: map[string]string{"team": "ml", "karpenter.sh/discovery": "*"}},
		{ID: "subnet-2"},
		{ID: "subnet-3", Tags: map[string]string{"env": "prod"}},
		{},
	}) {
		got = append(got, fmt.Sprintf("%s max=%d", filtersText(q.Filters), aws.ToInt32(q.MaxResults)))
	}
	want := []string{
		"tag-key=karpenter.sh/discovery tag:team=ml max=1000",
		"tag:env=prod subnet-id=subnet-3 max=1000",
		"subnet-id=subnet-1,subnet-2 max=1000",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("queries (-want +got):\n%s", diff)
	}
	if q := SubnetQueries(nil); len(q) != 0 {
		t.Errorf("no terms, yet queries %v", q)
	}
}

func TestSecurityGroupQueries(t *testing.T) {
	got := []string{}
	for _, q := range SecurityGroupQueries([]awsv1.SecurityGroupSelectorTerm{
		{ID: "sg-1"},
		{Name: "nodes"},
		{Tags: map[string]string{"team": "*"}},
		{ID: "sg-2"},
		{Name: "default", Tags: map[string]string{"env": "prod"}},
		{ID: "sg-3", Name: "web"},
		{Name: "extra"},
	}) {
		got = append(got, filtersText(q.Filters))
	}
	want := []string{
		"tag-key=team",
		"tag:env=prod group-name=default",
		"group-id=sg-3 group-name=web",
		"group-id=sg-1,sg-2",
		"group-name=nodes,extra",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("queries (-want +got):\n%s", diff)
	}
}

func TestImageQueries(t *testing.T) {
	nc := &awsv1.EC2NodeClass{Spec: awsv1.EC2NodeClassSpec{AMISelectorTerms: []awsv1.AMISelectorTerm{
		{ID: "ami-1"},
		{Name: "my-ami-*"},
		{Name: "shared-*", Owner: "123456789012, self"},
		{Tags: map[string]string{"team": "ml", "approved": "*"}},
		{Tags: map[string]string{"team": "ml"}, Owner: "amazon"},
		{SSMParameter: "/my/ami", Tags: map[string]string{"team": "ml"}},
		{ID: "ami-2"},
		{ID: "ami-3", Owner: "self"},
	}}}
	queries, err := ImageQueries(nc, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	got := []string{}
	for _, q := range queries {
		got = append(got, fmt.Sprintf("owners=%s %s deprecated=%v max=%d variants=%d",
			strings.Join(q.Input.Owners, ","), filtersText(q.Input.Filters), aws.ToBool(q.Input.IncludeDeprecated), aws.ToInt32(q.Input.MaxResults), len(q.Variants)))
	}
	want := []string{
		"owners=self,amazon name=my-ami-* state=available deprecated=true max=1000 variants=0",
		"owners=123456789012,self name=shared-* state=available deprecated=true max=1000 variants=0",
		"owners= tag-key=approved tag:team=ml state=available deprecated=true max=1000 variants=0",
		"owners=amazon tag:team=ml state=available deprecated=true max=1000 variants=0",
		"owners=self image-id=ami-3 state=available deprecated=true max=1000 variants=0",
		"owners= image-id=ami-1,ami-2 state=available deprecated=true max=1000 variants=0",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("queries (-want +got):\n%s", diff)
	}
}

func TestCapacityReservationQueries(t *testing.T) {
	got := []string{}
	for _, q := range CapacityReservationQueries([]awsv1.CapacityReservationSelectorTerm{
		{ID: "cr-1"},
		{Tags: map[string]string{"team": "ml"}, OwnerID: "123456789012"},
		{InstanceMatchCriteria: awsv1.InstanceMatchCriteriaTargeted},
		{OwnerID: "123456789012"},
		{ID: "cr-2"},
		{Tags: map[string]string{"team": "*"}, InstanceMatchCriteria: awsv1.InstanceMatchCriteriaOpen},
	}) {
		got = append(got, fmt.Sprintf("ids=%s %s max=%d", strings.Join(q.CapacityReservationIds, ","), filtersText(q.Filters), aws.ToInt32(q.MaxResults)))
	}
	want := []string{
		"ids=cr-1 state=active max=0",
		"ids= tag:team=ml state=active owner-id=123456789012 max=1000",
		"ids= state=active instance-match-criteria=targeted max=1000",
		"ids=cr-2 state=active max=0",
		"ids= tag-key=team state=active instance-match-criteria=open max=1000",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("queries (-want +got):\n%s", diff)
	}
}
