package manifests

import (
	"fmt"
	"strings"
	"testing"
)

// podBearing wraps a pod spec (a YAML flow mapping) in each kind that
// carries one, with the path of the spec within the object.
var podBearing = []struct {
	kind, path string
	doc        func(spec string) string
}{
	{"Pod", "spec", func(spec string) string {
		return "apiVersion: v1\nkind: Pod\nmetadata: {name: w}\nspec: " + spec + "\n"
	}},
	{"Deployment", "spec.template.spec", controllerWith("Deployment")},
	{"ReplicaSet", "spec.template.spec", controllerWith("ReplicaSet")},
	{"StatefulSet", "spec.template.spec", controllerWith("StatefulSet")},
	{"DaemonSet", "spec.template.spec", controllerWith("DaemonSet")},
	{"Job", "spec.template.spec", func(spec string) string {
		spec = strings.Replace(spec, "{", "{restartPolicy: Never, ", 1)
		return "apiVersion: batch/v1\nkind: Job\nmetadata: {name: w}\nspec:\n  template:\n    spec: " + spec + "\n"
	}},
}

func controllerWith(kind string) func(string) string {
	return func(spec string) string {
		return "apiVersion: apps/v1\nkind: " + kind + "\nmetadata: {name: w}\nspec:\n  selector: {matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: b}}\n    spec: " + spec + "\n"
	}
}

// A pod spec using every scheduling field simulate reads, correctly,
// loads in every kind.
func TestValidPodSpecs(t *testing.T) {
	const spec = `{
  containers: [{name: c, resources: {requests: {cpu: 500m, memory: 1Gi, nvidia.com/gpu: 1}, limits: {cpu: "1", memory: 1Gi, nvidia.com/gpu: 1}}}],
  initContainers: [{name: i, resources: {limits: {cpu: "1", example.com/dongle: 2}}}],
  nodeSelector: {topology.kubernetes.io/zone: us-west-2a},
  tolerations: [{operator: Exists}, {key: gpu, operator: Equal, value: "true", effect: NoSchedule}, {key: gpu, effect: NoExecute, tolerationSeconds: 30}],
  affinity: {
    nodeAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: karpenter.sh/capacity-type, operator: In, values: [spot]}, {key: cpu, operator: Gt, values: ["3"]}], matchFields: [{key: metadata.name, operator: NotIn, values: [node-1]}]}]},
      preferredDuringSchedulingIgnoredDuringExecution: [{weight: 100, preference: {matchExpressions: [{key: zone, operator: Exists}]}}]},
    podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: zone, labelSelector: {matchLabels: {a: b}}, namespaces: [team-a], matchLabelKeys: [pod-template-hash]}]},
    podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 1, podAffinityTerm: {topologyKey: kubernetes.io/hostname, namespaceSelector: {}}}]}},
  topologySpreadConstraints: [
    {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, minDomains: 3, labelSelector: {matchLabels: {a: b}}, matchLabelKeys: [pod-template-hash], nodeAffinityPolicy: Honor, nodeTaintsPolicy: Ignore},
    {maxSkew: 2, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway}]
}`
	l := newLoader(t)
	for _, k := range podBearing {
		t.Run(k.kind, func(t *testing.T) {
			if err := l.Read("p.yaml", []byte(k.doc(spec)), &Set{}); err != nil {
				t.Error(err)
			}
		})
	}
}

// Pod specs are checked as the API server checks them, in every kind
// that carries one, each error at its field's path within the object.
func TestInvalidPodSpecs(t *testing.T) {
	const c = "containers: [{name: c}]"
	required := func(expr string) string {
		return "{" + c + ", affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [" + expr + "]}]}}}}"
	}
	const req = "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0]"
	resources := func(r string) string { return "{containers: [{name: c, resources: " + r + "}]}" }
	toleration := func(tol string) string { return "{" + c + ", tolerations: [" + tol + "]}" }
	spread := func(tsc ...string) string {
		return "{" + c + ", topologySpreadConstraints: [" + strings.Join(tsc, ", ") + "]}"
	}
	podAffinity := func(affinity string) string { return "{" + c + ", affinity: " + affinity + "}" }
	l := newLoader(t)
	for _, tc := range []struct {
		name, spec string
		// want are lines of the error, each after "<source> (<Kind> w): <path>.".
		want []string
	}{
		{"an unknown node selector operator", required("{key: zone, operator: Near, values: [a]}"),
			[]string{req + `.operator: Invalid value: "Near": not a valid selector operator`}},
		{"In without values", required("{key: zone, operator: In}"),
			[]string{req + ".values: Required value: must be specified when `operator` is 'In' or 'NotIn'"}},
		{"Exists with values", required("{key: zone, operator: Exists, values: [a]}"),
			[]string{req + ".values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"}},
		{"Gt with two values", required("{key: cpu, operator: Gt, values: ['1', '2']}"),
			[]string{req + ".values: Required value: must be specified single value when `operator` is 'Lt' or 'Gt'"}},
		{"a node selector key that is no label", required("{key: 'bad key', operator: Exists}"),
			[]string{req + `.key: Invalid value: "bad key": name part must consist of alphanumeric characters`}},
		{"a required value that is no label value", required("{key: zone, operator: In, values: ['a b']}"),
			[]string{req + `.values[0]: Invalid value: "a b": a valid label must be an empty string or consist of alphanumeric characters`}},
		{"no node selector terms", "{" + c + ", affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: []}}}}",
			[]string{"affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: Required value: must have at least one node selector term"}},
		{"a field selector on another field", "{" + c + ", affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchFields: [{key: spec.x, operator: In, values: [a]}]}]}}}}",
			[]string{`affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0].key: Invalid value: "spec.x": not a valid field selector key`}},
		{"a preferred term with no weight and an unknown operator", "{" + c + ", affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 0, preference: {matchExpressions: [{key: zone, operator: Near}]}}]}}}", []string{
			"affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 0: must be in the range 1-100",
			`affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator`,
		}},

		{"an unknown whenUnsatisfiable", spread("{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: Sometimes}"),
			[]string{`topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: "Sometimes": supported values: "DoNotSchedule", "ScheduleAnyway"`}},
		{"a maxSkew of 0", spread("{maxSkew: 0, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}"),
			[]string{"topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than 0"}},
		{"no topologyKey", spread("{maxSkew: 1, whenUnsatisfiable: DoNotSchedule}"),
			[]string{"topologySpreadConstraints[0].topologyKey: Required value: can not be empty"}},
		{"a repeated constraint", spread("{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}", "{maxSkew: 2, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}"),
			[]string{`topologySpreadConstraints[0].{topologyKey, whenUnsatisfiable}: Duplicate value: "{zone, DoNotSchedule}"`}},
		{"minDomains with ScheduleAnyway", spread("{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway, minDomains: 2}"),
			[]string{"topologySpreadConstraints[0].minDomains: Invalid value: 2: can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway"}},
		{"an unknown node inclusion policy", spread("{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, nodeTaintsPolicy: Maybe}"),
			[]string{`topologySpreadConstraints[0].nodeTaintsPolicy: Unsupported value: "Maybe": supported values: "Honor", "Ignore"`}},
		{"a malformed spread selector", spread("{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchExpressions: [{key: a, operator: Near}]}}"),
			[]string{`topologySpreadConstraints[0].labelSelector.matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator`}},
		{"matchLabelKeys without a selector", spread("{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, matchLabelKeys: [app]}"),
			[]string{"topologySpreadConstraints[0].matchLabelKeys: Forbidden: must not be specified when labelSelector is not set"}},

		{"a cpu request above its limit", resources("{requests: {cpu: '2'}, limits: {cpu: '1'}}"),
			[]string{`containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1`}},
		{"a memory request above its limit", resources("{requests: {memory: 2Gi}, limits: {memory: 1Gi}}"),
			[]string{`containers[0].resources.requests: Invalid value: "2Gi": must be less than or equal to memory limit of 1Gi`}},
		{"an init container's request above its limit", "{" + c + ", initContainers: [{name: i, resources: {requests: {cpu: '2'}, limits: {cpu: '1'}}}]}",
			[]string{`initContainers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1`}},
		{"an extended resource request below its limit", resources("{requests: {nvidia.com/gpu: 1}, limits: {nvidia.com/gpu: 2}}"),
			[]string{`containers[0].resources.requests: Invalid value: "1": must be equal to nvidia.com/gpu limit of 2`}},
		{"an extended resource request without a limit", resources("{requests: {nvidia.com/gpu: 1}}"),
			[]string{"containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources"}},
		{"a fraction of an extended resource", resources("{limits: {nvidia.com/gpu: 500m}}"),
			[]string{`containers[0].resources.limits[nvidia.com/gpu]: Invalid value: "500m": must be an integer`}},
		{"an unknown resource", resources("{requests: {gpu: 1}}"),
			[]string{`containers[0].resources.requests[gpu]: Invalid value: "gpu": must be a standard resource for containers`}},
		{"a negative limit", resources("{limits: {memory: -1}}"),
			[]string{`containers[0].resources.limits[memory]: Invalid value: "-1": must be greater than or equal to 0`}},
		{"a malformed quantity", resources("{requests: {cpu: 1x5}}"),
			[]string{`containers[0].resources.requests[cpu]: Invalid value: "1x5": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`}},

		{"an unknown toleration operator", toleration("{key: k, operator: Matches}"),
			[]string{`tolerations[0].operator: Unsupported value: "Matches": supported values: "Equal", "Exists"`}},
		{"a comparison toleration operator (alpha, off by default)", toleration("{key: k, operator: Lt, value: '5'}"),
			[]string{`tolerations[0].operator: Unsupported value: "Lt": supported values: "Equal", "Exists"`}},
		{"Exists with a value", toleration("{key: k, operator: Exists, value: v}"),
			[]string{"tolerations[0].operator: Invalid value: \"v\": value must be empty when `operator` is 'Exists'"}},
		{"Equal without a key", toleration("{operator: Equal, value: v}"),
			[]string{"tolerations[0].operator: Invalid value: \"Equal\": operator must be Exists when `key` is empty, which means \"match all values and all keys\""}},
		{"an unknown effect", toleration("{key: k, operator: Exists, effect: NoRun}"),
			[]string{`tolerations[0].effect: Unsupported value: "NoRun": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"`}},
		{"tolerationSeconds without NoExecute", toleration("{key: k, operator: Exists, effect: NoSchedule, tolerationSeconds: 5}"),
			[]string{"tolerations[0].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set"}},
		{"a toleration key that is no label", toleration("{key: 'a b', operator: Exists}"),
			[]string{`tolerations[0].key: Invalid value: "a b": name part must consist of alphanumeric characters`}},
		{"an Equal value that is no label value", toleration("{key: k, value: 'a b'}"),
			[]string{`tolerations[0].operator: Invalid value: "a b": a valid label must be an empty string or consist of alphanumeric characters`}},

		{"a pod affinity term without a topologyKey", podAffinity("{podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {matchLabels: {a: b}}}]}}"),
			[]string{"affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: Required value: can not be empty"}},
		{"a weighted anti-affinity term out of range, without a topologyKey", podAffinity("{podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 101, podAffinityTerm: {}}]}}"), []string{
			"affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 101: must be in the range 1-100",
			"affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.topologyKey: Required value: can not be empty",
		}},
		{"a malformed affinity selector", podAffinity("{podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: zone, labelSelector: {matchExpressions: [{key: a, operator: In}]}}]}}"),
			[]string{"affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"}},
		{"a malformed namespace selector", podAffinity("{podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: zone, namespaceSelector: {matchLabels: {'a b': c}}}]}}"),
			[]string{`affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].namespaceSelector.matchLabels: Invalid value: "a b": name part must consist of alphanumeric characters`}},
		{"an invalid namespace", podAffinity("{podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: zone, namespaces: [Team_A]}]}}"),
			[]string{`affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].namespaces[0]: Invalid value: "Team_A": a lowercase RFC 1123 label must consist of`}},
		{"a topologyKey that is no label", podAffinity("{podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: 'a b'}]}}"),
			[]string{`affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: Invalid value: "a b": name part must consist of alphanumeric characters`}},
		{"a node selector label that is no label", "{" + c + ", nodeSelector: {'a b': c}}",
			[]string{`nodeSelector: Invalid value: "a b": name part must consist of alphanumeric characters`}},
	} {
		for _, k := range podBearing {
			t.Run(tc.name+"/"+k.kind, func(t *testing.T) {
				err := l.Read("p.yaml", []byte(k.doc(tc.spec)), &Set{})
				if err == nil {
					t.Fatalf("accepted; want %q", tc.want)
				}
				for _, want := range tc.want {
					want = fmt.Sprintf("p.yaml, document 1 (%s w): %s.%s", k.kind, k.path, want)
					if !hasLinePrefix(err.Error(), want) {
						t.Errorf("error:\n%v\nhas no line starting %s", err, want)
					}
				}
			})
		}
	}
}

// hasLinePrefix reports whether some line of s starts with prefix.
func hasLinePrefix(s, prefix string) bool {
	for line := range strings.Lines(s) {
		if strings.HasPrefix(line, prefix) {
			return true
		}
	}
	return false
}
