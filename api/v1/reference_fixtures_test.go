package v1_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/capstan-dev/capstan/pkg/test"
)

// fixture is one of the reference's own examples, fed to the API server as
// its test writes it: Reject says whether the reference's CRD refuses it,
// Message is the reference's message when its test or CRD names one.
type fixture struct {
	Source  string // the reference's file (kubernetes-sigs/karpenter v1.14.1)
	Name    string // the reference's test name
	Patch   string // YAML merged into the base object's spec
	Reject  bool
	Message string
}

// Sources of the fixtures.
const (
	nodePoolCEL  = "pkg/apis/v1/nodepool_validation_cel_test.go"
	nodeClaimCEL = "pkg/apis/v1/nodeclaim_validation_cel_test.go"
)

// referenceNodePool is the reference's test NodePool
// (nodepool_validation_cel_test.go's BeforeEach).
const referenceNodePool = `
apiVersion: karpenter.sh/v1
kind: NodePool
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.test.sh, kind: TestNodeClass, name: default}
      requirements:
      - {key: karpenter.sh/capacity-type, operator: Exists}
`

// referenceNodeClaim is the reference's test NodeClaim
// (nodeclaim_validation_cel_test.go's BeforeEach).
const referenceNodeClaim = `
apiVersion: karpenter.sh/v1
kind: NodeClaim
spec:
  nodeClassRef: {group: karpenter.test.sh, kind: TestNodeClass, name: default}
  requirements:
  - {key: karpenter.sh/capacity-type, operator: Exists}
`

// runFixtures creates base with each fixture's patch and checks the API
// server's answer.
func runFixtures(t *testing.T, base string, fixtures []fixture) {
	t.Helper()
	ctx := context.Background()
	for _, f := range fixtures {
		t.Run(f.Name, func(t *testing.T) {
			obj := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(base), &obj.Object); err != nil {
				t.Fatal(err)
			}
			var patch map[string]any
			if err := yaml.Unmarshal([]byte(f.Patch), &patch); err != nil {
				t.Fatalf("%s: patch: %v", f.Source, err)
			}
			spec, _, _ := unstructured.NestedMap(obj.Object, "spec")
			obj.Object["spec"] = merge(spec, patch)
			obj.SetName(test.RandomName("fixture"))
			err := env.Client.Create(ctx, obj)
			switch {
			case f.Reject && err == nil:
				t.Errorf("%s: accepted; the reference rejects it", f.Source)
			case !f.Reject && err != nil:
				t.Errorf("%s: rejected, the reference accepts it: %v", f.Source, err)
			case f.Reject && f.Message != "" && !strings.Contains(err.Error(), f.Message):
				t.Errorf("%s: error %q\nwant the reference's message %q", f.Source, err, f.Message)
			}
		})
	}
}

// merge is a JSON merge patch of patch into base (maps merge, everything
// else is replaced).
func merge(base, patch map[string]any) map[string]any {
	out := map[string]any{}
	raw, _ := json.Marshal(base)
	_ = json.Unmarshal(raw, &out)
	for k, v := range patch {
		pm, pok := v.(map[string]any)
		bm, bok := out[k].(map[string]any)
		if pok && bok {
			out[k] = merge(bm, pm)
			continue
		}
		out[k] = v
	}
	return out
}

func TestReferenceNodePoolFixtures(t *testing.T) {
	runFixtures(t, referenceNodePool, nodePoolFixtures)
}

func TestReferenceNodeClaimFixtures(t *testing.T) {
	runFixtures(t, referenceNodeClaim, nodeClaimFixtures)
}

func reqs(yaml string) string { return "template: {spec: {requirements: " + yaml + "}}" }
func taints(yaml string) string {
	return "template: {spec: {taints: " + yaml + "}}"
}
func labels(yaml string) string  { return "template: {metadata: {labels: " + yaml + "}}" }
func budgets(yaml string) string { return "disruption: {budgets: " + yaml + "}" }

const (
	msgSchedule = "'schedule' must be set with 'duration'"
	msgIn       = "requirements with operator 'In' must have a value defined"
	msgGtLt     = "requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer value"
	msgMinVals  = "requirements with 'minValues' must have at least that many values specified in the 'values' field"
	msgNodePool = `label "karpenter.sh/nodepool" is restricted`
	msgDomain   = `label domain "karpenter.sh" is restricted`
	msgHostname = `label "kubernetes.io/hostname" is restricted`
)

var nodePoolFixtures = []fixture{
	{nodePoolCEL, "should succeed on a disabled expireAfter", "template: {spec: {expireAfter: Never}}", false, ""},
	{nodePoolCEL, "should succeed on a disabled consolidateAfter", "disruption: {consolidateAfter: Never}", false, ""},
	{nodePoolCEL, "should succeed when setting consolidateAfter with consolidationPolicy=WhenEmpty", "disruption: {consolidateAfter: 30s, consolidationPolicy: WhenEmpty}", false, ""},
	{nodePoolCEL, "should succeed when setting consolidateAfter with consolidationPolicy=WhenEmptyOrUnderutilized", "disruption: {consolidateAfter: 30s, consolidationPolicy: WhenEmptyOrUnderutilized}", false, ""},
	{nodePoolCEL, "should succeed when setting consolidateAfter to 'Never' with WhenEmpty", "disruption: {consolidateAfter: Never, consolidationPolicy: WhenEmpty}", false, ""},
	{nodePoolCEL, "should fail when creating a budget with an invalid cron", budgets(`[{nodes: "10", schedule: "*", duration: 20m}]`), true, ""},
	{nodePoolCEL, "should fail when creating a schedule with less than 5 entries", budgets(`[{nodes: "10", schedule: "* * * * ", duration: 20m}]`), true, ""},
	{nodePoolCEL, "should fail when creating a budget with a negative duration", budgets(`[{nodes: "10", schedule: "* * * * *", duration: -20m}]`), true, ""},
	{nodePoolCEL, "should fail when creating a budget with a seconds duration", budgets(`[{nodes: "10", schedule: "* * * * *", duration: 30s}]`), true, ""},
	{nodePoolCEL, "should fail when creating a budget with a negative value int", budgets(`[{nodes: "-10"}]`), true, ""},
	{nodePoolCEL, "should fail when creating a budget with a negative value percent", budgets(`[{nodes: "-10%"}]`), true, ""},
	{nodePoolCEL, "should fail when creating a budget with a value percent with more than 3 digits", budgets(`[{nodes: "1000%"}]`), true, ""},
	{nodePoolCEL, "should fail when creating a budget with a cron but no duration", budgets(`[{nodes: "10", schedule: "* * * * *"}]`), true, msgSchedule},
	{nodePoolCEL, "should fail when creating a budget with a duration but no cron", budgets(`[{nodes: "10", duration: 20m}]`), true, msgSchedule},
	{nodePoolCEL, "should succeed when creating a budget with both duration and cron", budgets(`[{nodes: "10", schedule: "* * * * *", duration: 20m}]`), false, ""},
	{nodePoolCEL, "should succeed when creating a budget with hours and minutes in duration", budgets(`[{nodes: "10", schedule: "* * * * *", duration: 2h20m}]`), false, ""},
	{nodePoolCEL, "should succeed when creating a budget with neither duration nor cron", budgets(`[{nodes: "10"}]`), false, ""},
	{nodePoolCEL, "should succeed when creating a budget with special cased crons", budgets(`[{nodes: "10", schedule: "@annually", duration: 20m}]`), false, ""},
	{nodePoolCEL, "should fail when creating two budgets where one has an invalid crontab", budgets(`[{nodes: "10", schedule: "@annually", duration: 20m}, {nodes: "10", schedule: "*", duration: 20m}]`), true, ""},
	{nodePoolCEL, "should fail when creating multiple budgets where one doesn't have both schedule and duration",
		budgets(`[{nodes: "10", duration: 20m}, {nodes: "10", schedule: "* * * * *", duration: 20m}, {nodes: "10"}]`), true, msgSchedule},
	{nodePoolCEL, "should allow disruption reason Drifted", budgets(`[{nodes: "10", schedule: "* * * * *", duration: 20m, reasons: [Drifted]}]`), false, ""},
	{nodePoolCEL, "should allow disruption reason Underutilized", budgets(`[{nodes: "10", schedule: "* * * * *", duration: 20m, reasons: [Underutilized]}]`), false, ""},
	{nodePoolCEL, "should allow disruption reason Empty", budgets(`[{nodes: "10", schedule: "* * * * *", duration: 20m, reasons: [Empty]}]`), false, ""},
	{nodePoolCEL, "should not allow invalid reason", budgets(`[{nodes: "10", schedule: "* * * * *", duration: 20m, reasons: [invalid]}]`), true, ""},
	{nodePoolCEL, "should not allow expired disruption reason", budgets(`[{nodes: "10", schedule: "* * * * *", duration: 20m, reasons: [expired]}]`), true, ""},
	{nodePoolCEL, "should not allow empty reason", budgets(`[{nodes: "10", schedule: "* * * * *", duration: 20m, reasons: [""]}]`), true, ""},
	{nodePoolCEL, "should allow setting multiple reasons", budgets(`[{nodes: "10", schedule: "* * * * *", duration: 20m, reasons: [Drifted, Empty]}]`), false, ""},
	{nodePoolCEL, "should succeed for valid taints", taints(`[{key: a, value: b, effect: NoSchedule}, {key: c, value: d, effect: NoExecute}, {key: e, value: f, effect: PreferNoSchedule},
		{key: Test, value: f, effect: PreferNoSchedule}, {key: test.com/Test, value: f, effect: PreferNoSchedule}, {key: test.com.com/test, value: f, effect: PreferNoSchedule}, {key: key-only, effect: NoExecute}]`), false, ""},
	{nodePoolCEL, "should fail for invalid taint keys (test.com.com})", taints(`[{key: "test.com.com}", effect: NoSchedule}]`), true, ""},
	{nodePoolCEL, "should fail for invalid taint keys (Test.com/test)", taints(`[{key: Test.com/test, effect: NoSchedule}]`), true, ""},
	{nodePoolCEL, "should fail for invalid taint keys (test/test/test)", taints(`[{key: test/test/test, effect: NoSchedule}]`), true, ""},
	{nodePoolCEL, "should fail for invalid taint keys (test/)", taints(`[{key: test/, effect: NoSchedule}]`), true, ""},
	{nodePoolCEL, "should fail for invalid taint keys (/test)", taints(`[{key: /test, effect: NoSchedule}]`), true, ""},
	{nodePoolCEL, "should fail for missing taint key", taints(`[{effect: NoSchedule}]`), true, ""},
	{nodePoolCEL, "should fail for invalid taint value", taints(`[{key: invalid-value, effect: NoSchedule, value: "???"}]`), true, ""},
	{nodePoolCEL, "should fail for invalid taint effect", taints(`[{key: invalid-effect, effect: "???"}]`), true, ""},
	{nodePoolCEL, "should not fail for same key with different effects", taints(`[{key: a, effect: NoSchedule}, {key: a, effect: NoExecute}]`), false, ""},
	{nodePoolCEL, "should succeed for valid requirement keys", reqs(`[{key: Test, operator: Exists}, {key: test.com/Test, operator: Exists}, {key: test.com.com/test, operator: Exists}, {key: key-only, operator: Exists}]`), false, ""},
	{nodePoolCEL, "should fail for invalid requirement keys (test.com.com})", reqs(`[{key: "test.com.com}", operator: Exists}]`), true, ""},
	{nodePoolCEL, "should fail for invalid requirement keys (Test.com/test)", reqs(`[{key: Test.com/test, operator: Exists}]`), true, ""},
	{nodePoolCEL, "should fail for invalid requirement keys (test/test/test)", reqs(`[{key: test/test/test, operator: Exists}]`), true, ""},
	{nodePoolCEL, "should fail for invalid requirement keys (test/)", reqs(`[{key: test/, operator: Exists}]`), true, ""},
	{nodePoolCEL, "should fail for invalid requirement keys (/test)", reqs(`[{key: /test, operator: Exists}]`), true, ""},
	{nodePoolCEL, "should fail for the karpenter.sh/nodepool label (requirement)", reqs(`[{key: karpenter.sh/nodepool, operator: In, values: [silly]}]`), true, msgNodePool},
	{nodePoolCEL, "should allow supported ops", reqs(`[{key: topology.kubernetes.io/zone, operator: In, values: [test]}, {key: topology.kubernetes.io/zone, operator: Gt, values: ["1"]},
		{key: topology.kubernetes.io/zone, operator: Lt, values: ["1"]}, {key: topology.kubernetes.io/zone, operator: NotIn}, {key: topology.kubernetes.io/zone, operator: Exists}]`), false, ""},
	{nodePoolCEL, "should fail for unsupported ops", reqs(`[{key: topology.kubernetes.io/zone, operator: unknown, values: [test]}]`), true, ""},
	{nodePoolCEL, "should fail for restricted domains (karpenter.sh)", reqs(`[{key: karpenter.sh/test, operator: In, values: [test]}]`), true, msgDomain},
	{nodePoolCEL, "should fail for restricted labels (kubernetes.io/hostname)", reqs(`[{key: kubernetes.io/hostname, operator: In, values: [test]}]`), true, msgHostname},
	{nodePoolCEL, "should allow kubernetes domains (kubernetes.io)", reqs(`[{key: kubernetes.io/test, operator: In, values: [test]}]`), false, ""},
	{nodePoolCEL, "should allow kubernetes domains (k8s.io)", reqs(`[{key: k8s.io/test, operator: In, values: [test]}]`), false, ""},
	{nodePoolCEL, "should allow kubernetes subdomains exceptions (kubernetes.io)", reqs(`[{key: subdomain.kubernetes.io/test, operator: In, values: [test]}]`), false, ""},
	{nodePoolCEL, "should allow kubernetes subdomains exceptions (k8s.io)", reqs(`[{key: subdomain.k8s.io/test, operator: In, values: [test]}]`), false, ""},
	{nodePoolCEL, "should allow well known label exceptions (instance type)", reqs(`[{key: node.kubernetes.io/instance-type, operator: In, values: [test]}]`), false, ""},
	{nodePoolCEL, "should allow well known label exceptions (arch)", reqs(`[{key: kubernetes.io/arch, operator: In, values: [test]}]`), false, ""},
	{nodePoolCEL, "should allow well known label exceptions (region)", reqs(`[{key: topology.kubernetes.io/region, operator: In, values: [test]}]`), false, ""},
	{nodePoolCEL, "should allow non-empty set after removing overlapped value", reqs(`[{key: topology.kubernetes.io/zone, operator: In, values: [test, foo]}, {key: topology.kubernetes.io/zone, operator: NotIn, values: [test, bar]}]`), false, ""},
	{nodePoolCEL, "should allow empty requirements", reqs(`[]`), false, ""},
	{nodePoolCEL, "should fail with invalid GT or LT values (Gt no value)", reqs(`[{key: topology.kubernetes.io/zone, operator: Gt, values: []}]`), true, msgGtLt},
	{nodePoolCEL, "should fail with invalid GT or LT values (Gt two values)", reqs(`[{key: topology.kubernetes.io/zone, operator: Gt, values: ["1", "2"]}]`), true, msgGtLt},
	{nodePoolCEL, "should fail with invalid GT or LT values (Gt a)", reqs(`[{key: topology.kubernetes.io/zone, operator: Gt, values: [a]}]`), true, msgGtLt},
	{nodePoolCEL, "should fail with invalid GT or LT values (Lt -1)", reqs(`[{key: topology.kubernetes.io/zone, operator: Lt, values: ["-1"]}]`), true, ""},
	{nodePoolCEL, "should fail with invalid GTE or LTE values (Gte two values)", reqs(`[{key: topology.kubernetes.io/zone, operator: Gte, values: ["1", "2"]}]`), true, msgGtLt},
	{nodePoolCEL, "should fail with invalid GTE or LTE values (Lte a)", reqs(`[{key: topology.kubernetes.io/zone, operator: Lte, values: [a]}]`), true, msgGtLt},
	{nodePoolCEL, "should error when minValues is negative", reqs(`[{key: node.kubernetes.io/instance-type, operator: In, values: [insance-type-1], minValues: -1}]`), true, ""},
	{nodePoolCEL, "should error when minValues is zero", reqs(`[{key: node.kubernetes.io/instance-type, operator: In, values: [insance-type-1], minValues: 0}]`), true, ""},
	{nodePoolCEL, "should error when minValues is more than 50", reqs(`[{key: node.kubernetes.io/instance-type, operator: Exists, minValues: 51}]`), true, ""},
	{nodePoolCEL, "should error when minValues is greater than the number of unique values specified within In operator",
		reqs(`[{key: node.kubernetes.io/instance-type, operator: In, values: [insance-type-1], minValues: 2}]`), true, msgMinVals},
	{nodePoolCEL, "should allow unrecognized labels", labels(`{foo: silly}`), false, ""},
	{nodePoolCEL, "should fail for the karpenter.sh/nodepool label (label)", labels(`{karpenter.sh/nodepool: silly}`), true, msgNodePool},
	{nodePoolCEL, "should fail for invalid label values", labels(`{silly: "/ is not allowed"}`), true, ""},
	{nodePoolCEL, "should fail for restricted label domains (karpenter.sh)", labels(`{karpenter.sh/unknown: silly}`), true, msgDomain},
	{nodePoolCEL, "should allow labels kOps require", labels(`{kops.k8s.io/instancegroup: karpenter-nodes, kops.k8s.io/gpu: "1"}`), false, ""},
	{nodePoolCEL, "should allow labels in kubernetes domains", labels(`{kubernetes.io: test-value}`), false, ""},
	{nodePoolCEL, "should allow labels prefixed with the kubernetes domain", labels(`{kubernetes.io/key: test-value}`), false, ""},
	{nodePoolCEL, "should allow subdomain labels in restricted domains exceptions list", labels(`{subdomain.k8s.io: test-value}`), false, ""},
	{nodePoolCEL, "should allow subdomain labels prefixed with the kubernetes domain", labels(`{subdomain.kubernetes.io/key: test-value}`), false, ""},
	{nodePoolCEL, "should succeed on a valid terminationGracePeriod (single unit)", "template: {spec: {terminationGracePeriod: 30s}}", false, ""},
	{nodePoolCEL, "should succeed on a valid terminationGracePeriod (multiple units)", "template: {spec: {terminationGracePeriod: 1h30m5s}}", false, ""},
	{nodePoolCEL, "should fail on an invalid terminationGracePeriod (negative)", "template: {spec: {terminationGracePeriod: -1s}}", true, ""},
	{nodePoolCEL, "should fail on an invalid terminationGracePeriod (invalid unit)", "template: {spec: {terminationGracePeriod: 1hr}}", true, ""},
	{nodePoolCEL, "should fail on an invalid terminationGracePeriod (never)", "template: {spec: {terminationGracePeriod: Never}}", true, ""},
	{nodePoolCEL, "should fail on an invalid terminationGracePeriod (partial match)", "template: {spec: {terminationGracePeriod: FooNever}}", true, ""},
	{nodePoolCEL, "should fail if group is unset", `template: {spec: {nodeClassRef: {group: ""}}}`, true, "group may not be empty"},
	{nodePoolCEL, "should fail if kind is unset", `template: {spec: {nodeClassRef: {kind: ""}}}`, true, "kind may not be empty"},
	{nodePoolCEL, "should fail if name is unset", `template: {spec: {nodeClassRef: {name: ""}}}`, true, "name may not be empty"},
}

func nodeClaimReqs(yaml string) string { return "requirements: " + yaml }

var nodeClaimFixtures = []fixture{
	{nodeClaimCEL, "should fail with invalid GT or LT values", nodeClaimReqs(`[{key: topology.kubernetes.io/zone, operator: Gt, values: ["1", "2"]}]`), true, msgGtLt},
	{nodeClaimCEL, "should fail with invalid GTE or LTE values", nodeClaimReqs(`[{key: topology.kubernetes.io/zone, operator: Lte, values: [a]}]`), true, msgGtLt},
	{nodeClaimCEL, "should fail for unsupported ops", nodeClaimReqs(`[{key: topology.kubernetes.io/zone, operator: unknown, values: [test]}]`), true, ""},
	{nodeClaimCEL, "should allow supported ops", nodeClaimReqs(`[{key: topology.kubernetes.io/zone, operator: In, values: [test]}, {key: topology.kubernetes.io/zone, operator: NotIn}, {key: topology.kubernetes.io/zone, operator: Exists}]`), false, ""},
	{nodeClaimCEL, "should error when minValues is greater than the number of unique values specified within In operator",
		nodeClaimReqs(`[{key: node.kubernetes.io/instance-type, operator: In, values: [insance-type-1], minValues: 2}]`), true, msgMinVals},
	{nodeClaimCEL, "should succeed for valid group", `nodeClassRef: {group: karpenter.test.sh, kind: TestNodeClass, name: nodeclass-test}`, false, ""},
	{nodeClaimCEL, "should fail for invalid group", `nodeClassRef: {group: karpenter.test.sh/v1, kind: TestNodeClass, name: nodeclass-test}`, true, ""},
	{nodeClaimCEL, "should allow kubernetes domains", nodeClaimReqs(`[{key: kubernetes.io/test, operator: In, values: [test]}]`), false, ""},
	{nodeClaimCEL, "should allow empty requirements", nodeClaimReqs(`[]`), false, ""},
	{nodeClaimCEL, "should error when minValues is more than 50", nodeClaimReqs(`[{key: node.kubernetes.io/instance-type, operator: Exists, minValues: 51}]`), true, ""},
	// Not fed: "should fail for restricted domains" and "should fail for
	// restricted labels". Capstan's NodeClaims carry keys from pods'
	// selectors, so only the per-requirement rules apply to them
	// (docs/api.md, "Differences from the reference's v1 schema").
}
