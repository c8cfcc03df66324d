package interruption

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/effects"
)

// A spot interruption is counted, marks its offering, deletes the
// NodeClaim forcefully by the deadline and is reported on NodeClaim and
// Node; a rebalance recommendation a NodePool opts into is expected.
func TestDecisionEffects(t *testing.T) {
	nc := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "nc"}, Status: v1.NodeClaimStatus{ProviderID: "sim://a", NodeName: "a"}}
	deadline := now.Add(2 * time.Minute)
	spot := cloudprovider.InterruptionNotice{ProviderID: "sim://a", Kind: cloudprovider.SpotInterruption, InstanceType: "m5.large", Zone: "z", Deadline: deadline}
	d := (&Handler{}).Step([]cloudprovider.InterruptionNotice{spot}, map[string]Claim{"sim://a": {NodeClaim: nc}}, now)
	ice := cloudprovider.NewInsufficientCapacityError(nil)
	ice.Add(cloudprovider.OfferingKey{CapacityType: v1.CapacityTypeSpot, InstanceType: "m5.large", Zone: "z"}, string(cloudprovider.SpotInterruption))
	var kinds []string
	for _, e := range d.Effects {
		switch e := e.(type) {
		case effects.Metric:
			kinds = append(kinds, "Metric:"+e.Name)
		case effects.MarkUnavailable:
			if diff := cmp.Diff(ice, e.Error); diff != "" {
				t.Errorf("marked (-want +got):\n%s", diff)
			}
			kinds = append(kinds, "MarkUnavailable")
		case effects.MergeMetadata:
			kinds = append(kinds, "MergeMetadata:"+e.Annotations[v1.NodeClaimTerminationTimestampAnnotationKey])
		case effects.SetCondition:
			kinds = append(kinds, "SetCondition:"+e.Condition.Reason)
		case effects.DeleteNodeClaim:
			kinds = append(kinds, "Delete:"+e.Name)
		case effects.Event:
			kinds = append(kinds, "Event:"+e.Type+":"+e.Reason+":"+string(e.Object.Kind))
		}
	}
	want := []string{"Metric:" + MetricReceived, "MarkUnavailable", "MergeMetadata:" + deadline.Format(time.RFC3339), "SetCondition:Interrupted",
		"Delete:nc", "Metric:capstan_nodeclaims_disrupted_total", "Event:Normal:DisruptionTerminating:NodeClaim", "Event:Normal:DisruptionTerminating:Node",
		"Event:" + corev1.EventTypeWarning + ":SpotInterruption:NodeClaim", "Event:" + corev1.EventTypeWarning + ":SpotInterruption:Node"}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("effects (-want +got):\n%s", diff)
	}

	np := &v1.NodePool{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{v1.RebalanceAnnotationKey: v1.RebalanceReplace}}}
	rebalance := cloudprovider.InterruptionNotice{ProviderID: "sim://a", Kind: cloudprovider.RebalanceRecommendation, Message: "at risk"}
	d = (&Handler{}).Step([]cloudprovider.InterruptionNotice{rebalance}, map[string]Claim{"sim://a": {NodeClaim: nc, NodePool: np}}, now)
	expect := effects.SetCondition{Object: effects.NodeClaimRef("nc"), Condition: metav1.Condition{Type: v1.ConditionTypeInterruptionExpected,
		Status: metav1.ConditionTrue, Reason: string(cloudprovider.RebalanceRecommendation), Message: "at risk", LastTransitionTime: metav1.NewTime(now)}}
	if len(d.Effects) != 4 || !cmp.Equal(d.Effects[1], expect) {
		t.Errorf("rebalance effects %+v, want counted, expected (%+v) and reported twice", d.Effects, expect)
	}
}
