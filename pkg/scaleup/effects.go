package scaleup

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/effects"
	"github.com/capstan-dev/capstan/pkg/state"
)

// MetricNodeClaimsCreated counts the NodeClaims the provisioner created,
// by NodePool and planned capacity type ("any" when it is not one).
const MetricNodeClaimsCreated = "capstan_nodeclaims_created_total"

// EventNominated tells a pod where it should schedule.
const EventNominated = "Nominated"

// Effects are what applying the decision takes: the NodeClaims created
// (each counted), and an event on every pod saying where it should
// schedule or why it can't be provisioned for; virtual pods exist
// nowhere to be told.
func (d Decision) Effects() []effects.Effect {
	var out []effects.Effect
	for _, f := range d.FlavorFailures {
		out = append(out, podEvent(f.Pod, corev1.EventTypeWarning, f.Reason, f.Err.Error(), nil))
	}
	for i, c := range d.Result.NewNodeClaims {
		nc := d.NodeClaims[i]
		capacityType := "any"
		if ct := c.Requirements.Get(v1.CapacityTypeLabelKey); ct.Len() == 1 {
			capacityType = ct.Any()
		}
		out = append(out, effects.CreateNodeClaim{NodeClaim: nc}, effects.Metric{Name: MetricNodeClaimsCreated, Labels: []string{c.NodePool, capacityType}, Value: 1})
		related := effects.NodeClaimRef(nc.Name)
		for _, pod := range c.Pods {
			if state.IsVirtual(pod) {
				continue
			}
			out = append(out, podEvent(pod, corev1.EventTypeNormal, EventNominated, fmt.Sprintf("pod should schedule on nodeclaim %s", nc.Name), &related))
		}
	}
	for _, n := range d.Result.Nominations {
		out = append(out, podEvent(n.Pod, corev1.EventTypeNormal, EventNominated, fmt.Sprintf("pod should schedule on node %s", n.NodeName), nil))
	}
	for _, u := range d.Result.Unplaced {
		out = append(out, podEvent(u.Pod, corev1.EventTypeWarning, string(u.Reason), u.Message, nil))
	}
	return out
}

func podEvent(p *corev1.Pod, eventType, reason, message string, related *effects.Ref) effects.Event {
	return effects.Event{Object: effects.PodRef(p.Namespace, p.Name), Related: related, Type: eventType, Reason: reason, Action: "Provision", Message: message}
}
