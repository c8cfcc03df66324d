package v1_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
)

func TestSpotMaxPrice(t *testing.T) {
	type result struct {
		Text  string
		Price float64
		Set   bool
		Err   bool
	}
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		want        result
	}{
		{"unset", nil, result{}},
		{"other annotations", map[string]string{"team": "a"}, result{}},
		{"a price", map[string]string{awsv1.SpotMaxPriceAnnotationKey: "0.042"}, result{Text: "0.042", Price: 0.042, Set: true}},
		{"whole dollars", map[string]string{awsv1.SpotMaxPriceAnnotationKey: "3"}, result{Text: "3", Price: 3, Set: true}},
		// EC2's minimum (FleetLaunchTemplateOverridesRequest.MaxPrice).
		{"EC2's minimum", map[string]string{awsv1.SpotMaxPriceAnnotationKey: "0.001"}, result{Text: "0.001", Price: 0.001, Set: true}},
		{"below EC2's minimum", map[string]string{awsv1.SpotMaxPriceAnnotationKey: "0.0009"}, result{Text: "0.0009", Set: true, Err: true}},
		{"zero", map[string]string{awsv1.SpotMaxPriceAnnotationKey: "0"}, result{Text: "0", Set: true, Err: true}},
		{"empty", map[string]string{awsv1.SpotMaxPriceAnnotationKey: ""}, result{Set: true, Err: true}},
		{"a dollar sign", map[string]string{awsv1.SpotMaxPriceAnnotationKey: "$0.5"}, result{Text: "$0.5", Set: true, Err: true}},
		{"negative", map[string]string{awsv1.SpotMaxPriceAnnotationKey: "-1"}, result{Text: "-1", Set: true, Err: true}},
		{"exponent", map[string]string{awsv1.SpotMaxPriceAnnotationKey: "1e-2"}, result{Text: "1e-2", Set: true, Err: true}},
		{"too long", map[string]string{awsv1.SpotMaxPriceAnnotationKey: "0.123456789012345678901"}, result{Text: "0.123456789012345678901", Set: true, Err: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nc := &awsv1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Annotations: tc.annotations}}
			text, price, set, err := nc.SpotMaxPrice()
			if diff := cmp.Diff(tc.want, result{Text: text, Price: price, Set: set, Err: err != nil}); diff != "" {
				t.Errorf("SpotMaxPrice() (-want +got):\n%s (err %v)", diff, err)
			}
		})
	}
}
