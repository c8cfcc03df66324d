package simulator_test

import (
	"strings"
	"testing"
	"time"

	"github.com/capstan-dev/capstan/pkg/simulator"
)

// reservationReturnSet is one reserved slot (cr-1, an m6i.2xlarge) and
// two one-pod Deployments that each fill such a node: batch takes the
// slot, web, scaled up at 2m, falls back to on-demand. batch scales to 0 at 30m, its empty
// node goes, and the slot is free again. The NodePool consolidates only
// empty nodes (WhenEmpty), so consolidation never moves web.
const reservationReturnSet = `apiVersion: sim.capstan.dev/v1alpha1
kind: CloudProfile
metadata: {name: reservation-return}
spec:
  region: us-west-2
  zones: [us-west-2a]
  style: aws
  launchLatency: 30s
  reservations:
  - {id: cr-1, instanceType: m6i.2xlarge, zone: us-west-2a, count: 1, type: open, ownerID: "111122223333"}
  events:
  - {at: 2m, type: Scale, workload: default/web, replicas: 1}
  - {at: 30m, type: Scale, workload: default/batch, replicas: 0}
---
apiVersion: sim.capstan.dev/v1alpha1
kind: SimNodeClass
metadata: {name: reserved}
spec:
  capacityReservationSelectorTerms: [{id: cr-1}]
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: reserved-on-demand}
spec:
  template:
    spec:
      requirements:
      - {key: karpenter.sh/capacity-type, operator: In, values: [reserved, on-demand]}
      - {key: node.kubernetes.io/instance-type, operator: In, values: [m6i.2xlarge]}
      nodeClassRef: {group: sim.capstan.dev, kind: SimNodeClass, name: reserved}
  disruption:
    consolidationPolicy: WhenEmpty
    consolidateAfter: 1m
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: batch, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: batch}}
  template:
    metadata: {labels: {app: batch}}
    spec:
      containers: [{name: c, image: busybox, resources: {requests: {cpu: "6"}}}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 0
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: c, image: busybox, resources: {requests: {cpu: "6"}}}]
`

// An on-demand node that fell back from a full reservation moves into
// the reservation once a slot frees, under WhenEmpty too: its reserved
// replacement is up before it drains. A full reservation is no
// unavailable mark, so there is no return-to-preferred-after to wait out
// (docs/disruption.md).
func TestReturnToReservation(t *testing.T) {
	r := run(t, read(t, reservationReturnSet), func(o *simulator.Options) { o.Duration = 90 * time.Minute })
	for _, n := range r.Nodes {
		t.Logf("%s %s %s launched %s disrupted %s deleted %s (%s) pods %v", n.Name, n.CapacityType, n.ReservationID, n.LaunchedAt, n.DisruptedAt, n.DeletedAt, n.DeletionReason, n.Pods)
	}
	onDemand := nodesWhere(r, func(n simulator.Node) bool { return n.CapacityType == "on-demand" })
	reserved := nodesWhere(r, func(n simulator.Node) bool { return n.CapacityType == "reserved" })
	if len(onDemand) != 1 || len(reserved) != 2 {
		t.Fatalf("want one on-demand node and two reserved ones (batch's, then web's)")
	}
	web := reserved[1]
	if onDemand[0].DeletedAt == "" || web.DeletedAt != "" || len(web.Pods) != 1 {
		t.Fatalf("on-demand %+v, reserved %+v: want the on-demand node replaced by a reserved one running web", onDemand[0], web)
	}
	if at(t, reserved[0].DeletedAt) < 30*time.Minute || at(t, web.LaunchedAt) < at(t, reserved[0].DeletedAt) || at(t, web.LaunchedAt) > at(t, reserved[0].DeletedAt)+time.Minute {
		t.Errorf("slot freed at %s, web's reserved node launched at %s: want it launched within a minute of the slot freeing", reserved[0].DeletedAt, web.LaunchedAt)
	}
	if at(t, onDemand[0].DisruptedAt) < at(t, web.LaunchedAt) {
		t.Errorf("on-demand disrupted at %s, before its replacement launched at %s", onDemand[0].DisruptedAt, web.LaunchedAt)
	}
	noPendingBetween(t, r, 3*time.Minute, 0)

	// With returns Disabled nothing moves web: WhenEmpty does not
	// consolidate a node that runs a pod.
	disabled := strings.Replace(reservationReturnSet, "metadata: {name: reserved-on-demand}",
		"metadata: {name: reserved-on-demand, annotations: {capstan.dev/return-to-preferred: Disabled}}", 1)
	r = run(t, read(t, disabled), func(o *simulator.Options) { o.Duration = 90 * time.Minute })
	if onDemand := nodesWhere(r, func(n simulator.Node) bool { return n.CapacityType == "on-demand" }); len(onDemand) != 1 || onDemand[0].DeletedAt != "" {
		t.Errorf("on-demand nodes %+v: with returns Disabled web's stays", onDemand)
	}
}
