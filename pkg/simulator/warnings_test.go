package simulator_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/capstan-dev/capstan/pkg/simulator"
)

// A NodePool whose budget time zone the controller marks invalid
// (ValidationSucceeded False, InvalidBudgetTimeZone) is kept and acts as
// in the controller, its budgets allowing nothing, so its empty nodes
// stay; the output says why, in JSON and in text. The same NodePool
// with a valid zone has its empty nodes removed.
func TestInvalidNodePoolIsReported(t *testing.T) {
	pool := func(tz string) string {
		return strings.Replace(nodePoolYAML("default", withBudget("1")), "metadata: {name: default}",
			"metadata: {name: default, annotations: {capstan.dev/budget-timezone: "+tz+"}}", 1)
	}
	runWith := func(tz string) *simulator.Result {
		set := read(t, placementHeader+pool(tz)+annotate(deploymentYAML("web", 2, spread), "delete-at: 10m"))
		return run(t, set, func(o *simulator.Options) { o.Duration = time.Hour })
	}

	valid := runWith("Europe/Berlin")
	if len(valid.Warnings) != 0 || len(valid.Nodes) == 0 || len(nodesWhere(valid, alive)) != 0 {
		t.Fatalf("a valid NodePool: warnings %v, %d of %d nodes left; want none left, no warning", valid.Warnings, len(nodesWhere(valid, alive)), len(valid.Nodes))
	}

	r := runWith("Mars/Base")
	if len(r.Nodes) == 0 || len(nodesWhere(r, alive)) != len(r.Nodes) {
		t.Errorf("%d of %d nodes left; want every empty node kept, as the controller keeps them", len(nodesWhere(r, alive)), len(r.Nodes))
	}
	message := `test.yaml, document 3 (NodePool default): metadata.annotations[capstan.dev/budget-timezone]: Invalid value: "Mars/Base" is not an IANA time zone name such as Europe/Berlin, unknown time zone Mars/Base`
	want := []simulator.Warning{{Object: "nodepool/default", Source: "test.yaml, document 3",
		Field: "metadata.annotations[capstan.dev/budget-timezone]", Message: message}}
	if diff := cmp.Diff(want, r.Warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var decoded struct {
		Warnings []map[string]string `json:"warnings"`
	}
	if err := json.Unmarshal(data, &decoded); err != nil {
		t.Fatal(err)
	}
	if len(decoded.Warnings) != 1 || decoded.Warnings[0]["message"] != message || decoded.Warnings[0]["field"] != want[0].Field {
		t.Errorf("JSON warnings %v, want %v", decoded.Warnings, want)
	}
	var text strings.Builder
	if err := simulator.WriteText(&text, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "Warnings") || !strings.Contains(text.String(), "  "+message+"\n") {
		t.Errorf("text lacks the warning:\n%s", text.String())
	}
}
