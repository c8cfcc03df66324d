package manifests

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A NodePool the controller would mark ValidationSucceeded=False is
// kept, with a warning per problem naming the file, document, object and
// field; a later version is checked too.
func TestNodePoolWarnings(t *testing.T) {
	bad := strings.Replace(timedPool, "metadata: {name: default}",
		`metadata: {name: default, annotations: {capstan.dev/rebalance: Replace, capstan.dev/budget-timezone: Mars/Base}}`, 1)
	bad = strings.Replace(bad, "spec: {template:", `spec: {disruption: {budgets: [{nodes: "1"}, {nodes: "0", schedule: "0 9 * * * *", duration: 1h}]}, template:`, 1)
	later := strings.Replace(timedPool, "metadata: {name: default}",
		`metadata: {name: default, annotations: {capstan.dev/return-to-preferred-after: soon, simulate.capstan.dev/apply-at: 30m}}`, 1)
	set := &Set{}
	if err := newLoader(t).Read("pool.yaml", []byte(docs(timedWeb, bad, later)), set); err != nil {
		t.Fatal(err)
	}
	if len(set.NodePools) != 1 {
		t.Fatalf("%d NodePools kept, want 1", len(set.NodePools))
	}
	var got []string
	for _, w := range set.Warnings {
		got = append(got, w.String())
	}
	want := []string{
		`pool.yaml, document 2 (NodePool default): metadata.annotations[capstan.dev/budget-timezone]: Invalid value: "Mars/Base" is not an IANA time zone name such as Europe/Berlin, unknown time zone Mars/Base`,
		`pool.yaml, document 2 (NodePool default): metadata.annotations[capstan.dev/rebalance]: Invalid value: "Replace" is not "replace" or "event"`,
		`pool.yaml, document 2 (NodePool default): spec.disruption.budgets[1].schedule: Invalid value: "0 9 * * * *": not a cron expression, expected exactly 5 fields, found 6: [0 9 * * * *]`,
		`pool.yaml, document 3 (NodePool default): metadata.annotations[capstan.dev/return-to-preferred-after]: Invalid value: "soon" is not a positive duration`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}
