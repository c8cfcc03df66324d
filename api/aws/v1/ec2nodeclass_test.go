package v1_test

import (
	"testing"

	"k8s.io/utils/ptr"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
)

func TestAliasAndAMIFamily(t *testing.T) {
	for _, tc := range []struct {
		name      string
		amiFamily *string
		terms     []awsv1.AMISelectorTerm
		alias     *awsv1.Alias
		family    string
	}{
		{"alias names the family", nil, []awsv1.AMISelectorTerm{{Alias: "al2023@latest"}},
			&awsv1.Alias{Family: awsv1.AMIFamilyAL2023, Version: awsv1.AliasVersionLatest}, awsv1.AMIFamilyAL2023},
		{"pinned bottlerocket", nil, []awsv1.AMISelectorTerm{{Alias: "bottlerocket@v1.20.0"}},
			&awsv1.Alias{Family: awsv1.AMIFamilyBottlerocket, Version: "v1.20.0"}, awsv1.AMIFamilyBottlerocket},
		{"Custom next to an alias wins", ptr.To(awsv1.AMIFamilyCustom), []awsv1.AMISelectorTerm{{Alias: "windows2022@latest"}},
			&awsv1.Alias{Family: awsv1.AMIFamilyWindows2022, Version: awsv1.AliasVersionLatest}, awsv1.AMIFamilyCustom},
		{"no alias", ptr.To(awsv1.AMIFamilyAL2), []awsv1.AMISelectorTerm{{ID: "ami-0a1"}}, nil, awsv1.AMIFamilyAL2},
		{"neither (validation refuses it)", nil, []awsv1.AMISelectorTerm{{ID: "ami-0a1"}}, nil, awsv1.AMIFamilyCustom},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nc := &awsv1.EC2NodeClass{Spec: awsv1.EC2NodeClassSpec{AMIFamily: tc.amiFamily, AMISelectorTerms: tc.terms}}
			if got := nc.Alias(); (got == nil) != (tc.alias == nil) || (got != nil && *got != *tc.alias) {
				t.Errorf("Alias() = %+v, want %+v", got, tc.alias)
			}
			if got := nc.AMIFamily(); got != tc.family {
				t.Errorf("AMIFamily() = %q, want %q", got, tc.family)
			}
		})
	}
}
