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
			UserData: ptr.To("#!/bin/bash"), Tags: map[string]string{"team": "ml"}, DetailedMonitoring: ptr.To(true),
		}, nil},
		{"every unsupported field, in manifest order", awsv1.EC2NodeClassSpec{
			AMISelectorTerms:    []awsv1.AMISelectorTerm{{ID: "ami-1"}, {SSMParameter: "/my/ami"}, {SSMParameter: "/other"}},
			Kubelet:             &awsv1.KubeletConfiguration{MaxPods: ptr.To[int32](110)},
			InstanceStorePolicy: ptr.To(awsv1.InstanceStorePolicyRAID0),
		}, []string{"spec.kubelet", "spec.instanceStorePolicy", "spec.amiSelectorTerms[1].ssmParameter", "spec.amiSelectorTerms[2].ssmParameter"}},
		{"an empty kubelet block is still set", awsv1.EC2NodeClassSpec{Kubelet: &awsv1.KubeletConfiguration{}}, []string{"spec.kubelet"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Unsupported(tc.spec)); diff != "" {
				t.Errorf("Unsupported (-want +got):\n%s", diff)
			}
		})
	}
}
