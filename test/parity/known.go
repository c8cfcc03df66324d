package parity

import (
	"time"

	"github.com/capstan-dev/capstan/pkg/disruption"
)

// The differences docs/simulate.md lists under "Parity with the cluster",
// each allowed only by the scenarios it names there.
var (
	// ReservationEndSeen: simulate judges a reserved node's reservation
	// every disruption.ReservationPoll (a minute) from its last
	// judgement; the controller judges it on that requeue too, and also on
	// every change to the NodeClaim (a watch event), so it usually sees
	// the end sooner.
	ReservationEndSeen = Settle(disruption.ReservationPoll+disruption.ReservationPoll/2,
		"a reservation's end is seen at simulate's next minutely judgement; the controller, woken by NodeClaim changes, often sees it sooner")

	// ScaleDownChoice: the scenario chooses which pods a scale-down keeps
	// (controller.kubernetes.io/pod-deletion-cost on running pods), which
	// manifests cannot say; simulate's ReplicaSet removes the newest pods,
	// so the nodes that empty, and the way consolidation goes, differ.
	// The nodes left and the pods running still agree.
	// GracePeriodEnd: the test checks as soon as the cluster's NodeClaims
	// are gone, which has come before the NodePool's terminationGracePeriod
	// ran out (the cluster's drain got past the PDB sooner; not pinned
	// down), while simulate, held by the PDB, waits the period out in full;
	// simulate runs that long past the check.
	GracePeriodEnd = Settle(15*time.Second,
		"the cluster's drain can finish before the terminationGracePeriod that simulate waits out in full")

	ScaleDownChoice = IgnoreDeletions("the scenario picks the pods a scale-down removes (pod-deletion-cost on running pods), which is not simulate input")
)

// CrashRollback: the controller (or the API server) went away with a
// disruption command in flight, which the restarted controller may roll
// back, deleting the replacement it had launched (a deletion without a
// disruption reason), and the watching checker may see a NodeClaim only
// gone, not its deletion's reason, across an API server restart. simulate
// has no crash. The nodes left and the pods running still agree.
var CrashRollback = IgnoreDeletions("the controller or API server was restarted mid-command, which may roll the command back; simulate has no crash")

// ScaleDownPacking: ScaleDownChoice, on a scenario whose pods share nodes,
// where the pods left decide how consolidation repacks them: the cluster
// itself ends with two m5.large or one m5.xlarge, at the same cost, run
// to run. TestConsolidationAfterScaleDown compares that cost with
// simulate's fresh solve itself; parity compares the pods running.
var ScaleDownPacking = IgnoreNodes("the scenario picks the pods a scale-down removes, and those left decide how consolidation repacks them (the same cost, other nodes); the test compares the cost with simulate's itself")
