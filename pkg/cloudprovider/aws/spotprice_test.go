package aws

import (
	"context"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/catalog"
)

// withMaxPrice is an EC2NodeClass with the spot max price annotation, or
// none when price is empty.
func withMaxPrice(price string) *awsv1.EC2NodeClass {
	class := &awsv1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	if price != "" {
		class.Annotations = map[string]string{awsv1.SpotMaxPriceAnnotationKey: price}
	}
	return class
}

func TestSpotCap(t *testing.T) {
	type limit struct {
		Price  float64
		Capped bool
	}
	for _, tc := range []struct {
		name     string
		price    string
		onDemand float64
		want     limit
	}{
		// EC2's default max price is the on-demand price (decision 4).
		{"unset: the on-demand price", "", 0.096, limit{0.096, true}},
		{"unset, no on-demand price known: no cap", "", 0, limit{}},
		{"set below on-demand", "0.02", 0.096, limit{0.02, true}},
		{"set above on-demand", "1.5", 0.096, limit{1.5, true}},
		{"unreadable: no spot at all", "cheap", 0.096, limit{0, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, capped := spotCap(withMaxPrice(tc.price), tc.onDemand)
			if diff := cmp.Diff(tc.want, limit{p, capped}); diff != "" {
				t.Errorf("spotCap (-want +got):\n%s", diff)
			}
		})
	}
}

// A spot offering priced above the class's cap is not offered, so the
// type is on-demand only in that zone; one at or under it stays.
func TestSpotOfferingsUnderTheCap(t *testing.T) {
	c := &region{
		types: map[string]machine{"m5.large": {
			info:  describe("m5.large"),
			zones: map[string]bool{"zone-a": true, "zone-b": true}, spot: true, onDemand: 0.096,
		}},
		spot: map[string]float64{"m5.large/zone-a": 0.04, "m5.large/zone-b": 0.03},
	}
	for _, tc := range []struct {
		name, price string
		want        []string
	}{
		{"no annotation", "", []string{"on-demand/zone-a", "spot/zone-a", "on-demand/zone-b", "spot/zone-b"}},
		{"a cap between the zones' prices", "0.035", []string{"on-demand/zone-a", "on-demand/zone-b", "spot/zone-b"}},
		{"a cap equal to a price", "0.04", []string{"on-demand/zone-a", "spot/zone-a", "on-demand/zone-b", "spot/zone-b"}},
		{"a cap below every price", "0.01", []string{"on-demand/zone-a", "on-demand/zone-b"}},
		{"an unreadable cap", "0,04", []string{"on-demand/zone-a", "on-demand/zone-b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := New(&templates{}, Options{Region: "us-west-2", ClusterName: "prod", Clock: clocktesting.NewFakeClock(time.Now()), NodeClasses: noClasses{}, Cluster: KnownCluster{}})
			if err != nil {
				t.Fatal(err)
			}
			class := withMaxPrice(tc.price)
			class.Status.Subnets = []awsv1.Subnet{{ID: "subnet-a", Zone: "zone-a"}, {ID: "subnet-b", Zone: "zone-b"}}
			var got []string
			for _, it := range p.instanceTypes(c, class) {
				for _, o := range it.Offerings {
					got = append(got, o.CapacityType+"/"+o.Zone)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("offerings (-want +got):\n%s", diff)
			}
		})
	}
}

// A spot fleet's overrides carry the class's max price as written; an
// on-demand fleet's, and a spot fleet's without the annotation, none.
func TestFleetMaxPrice(t *testing.T) {
	m5 := catalog.InstanceType{Name: "m5.large", Family: "m5", Category: "m", Generation: 5, Size: "large", Architecture: catalog.ArchAMD64, VCPU: 2, MemoryMiB: 8192, MaxPods: 29}.CloudInstanceType("us-west-2")
	nc := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "web-abcde", Labels: map[string]string{v1.NodePoolLabelKey: "web"}}}
	for _, tc := range []struct {
		name, price, ct string
		want            *string
	}{
		{"spot with a cap", "0.042", v1.CapacityTypeSpot, ptr.To("0.042")},
		{"spot without one", "", v1.CapacityTypeSpot, nil},
		{"on-demand", "0.042", v1.CapacityTypeOnDemand, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := New(&templates{}, Options{Region: "us-west-2", ClusterName: "prod", Clock: clocktesting.NewFakeClock(time.Now()), NodeClasses: noClasses{}, Cluster: KnownCluster{}})
			if err != nil {
				t.Fatal(err)
			}
			class := withMaxPrice(tc.price)
			class.Spec.AMIFamily = ptr.To(awsv1.AMIFamilyCustom)
			class.Status.Subnets = []awsv1.Subnet{{ID: "subnet-a", Zone: "zone-a"}, {ID: "subnet-b", Zone: "zone-b"}}
			class.Status.AMIs = []awsv1.AMI{{ID: "ami-amd64", Requirements: []corev1.NodeSelectorRequirement{{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}}}}}
			cands := []cloudprovider.LaunchCandidate{
				{InstanceType: m5, Offering: &cloudprovider.Offering{Zone: "zone-a", CapacityType: tc.ct}},
				{InstanceType: m5, Offering: &cloudprovider.Offering{Zone: "zone-b", CapacityType: tc.ct}},
			}
			in, _, _, err := p.fleet(context.Background(), nc, class, tc.ct, cands)
			if err != nil {
				t.Fatal(err)
			}
			var got []*string
			for _, cfg := range in.LaunchTemplateConfigs {
				for _, o := range cfg.Overrides {
					got = append(got, o.MaxPrice)
				}
			}
			want := []*string{tc.want, tc.want}
			if !cmp.Equal(want, got) {
				t.Errorf("overrides' MaxPrice %v, want %v", awssdk.ToStringSlice(got), awssdk.ToStringSlice(want))
			}
			if in.SpotOptions != nil && in.SpotOptions.MaxTotalPrice != nil {
				t.Errorf("SpotOptions.MaxTotalPrice %s, want none: the cap is per instance", awssdk.ToString(in.SpotOptions.MaxTotalPrice))
			}
		})
	}
}
