package ec2nodeclass

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
)

func TestUnsupported(t *testing.T) {
	cases := []struct {
		name string
		spec awsv1.EC2NodeClassSpec
		want []string
	}{
		{"nothing unsupported", awsv1.EC2NodeClassSpec{
			AMISelectorTerms: []awsv1.AMISelectorTerm{{Alias: "al2023@latest"}},
			CapacityReservationSelectorTerms: []awsv1.CapacityReservationSelectorTerm{
				{InstanceMatchCriteria: awsv1.InstanceMatchCriteriaOpen}},
			Kubelet:  &awsv1.KubeletConfiguration{MaxPods: ptr.To[int32](110)},
			UserData: ptr.To("#!/bin/bash"), Tags: map[string]string{"team": "ml"}, DetailedMonitoring: ptr.To(true),
		}, nil},
		{"every unsupported field, in manifest order", awsv1.EC2NodeClassSpec{
			AMISelectorTerms:    []awsv1.AMISelectorTerm{{ID: "ami-1"}, {SSMParameter: "/my/ami"}, {SSMParameter: "/other"}},
			AMIFamily:           ptr.To(awsv1.AMIFamilyBottlerocket),
			UserData:            ptr.To("[settings.kubernetes]"),
			InstanceStorePolicy: ptr.To(awsv1.InstanceStorePolicyRAID0),
		}, []string{"spec.userData with the Bottlerocket family", "spec.instanceStorePolicy", "spec.amiSelectorTerms[1].ssmParameter", "spec.amiSelectorTerms[2].ssmParameter"}},
		{"userData with a Bottlerocket alias", awsv1.EC2NodeClassSpec{
			AMISelectorTerms: []awsv1.AMISelectorTerm{{Alias: "bottlerocket@latest"}}, UserData: ptr.To("[settings]"),
		}, []string{"spec.userData with the Bottlerocket family"}},
		{"userData with a Bottlerocket alias and the Custom family is used as is", awsv1.EC2NodeClassSpec{
			AMISelectorTerms: []awsv1.AMISelectorTerm{{Alias: "bottlerocket@latest"}}, AMIFamily: ptr.To(awsv1.AMIFamilyCustom), UserData: ptr.To("[settings]"),
		}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Unsupported(tc.spec)); diff != "" {
				t.Errorf("Unsupported (-want +got):\n%s", diff)
			}
		})
	}
}
