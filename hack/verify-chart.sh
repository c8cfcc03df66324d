#!/usr/bin/env bash
# Checks the Helm chart charts/capstan with the helm and promtool that
# hack/tools.sh builds: helm lint and helm template with the defaults and
# with every optional part on; the values schema refusing typos and the
# clouds not implemented yet, with a message naming the value; the alert
# rules through `promtool check rules` and their unit tests through
# `promtool test rules`. (Every metric they query is checked by
# cmd/capstan/app's monitoring test; `kubectl apply --dry-run=server` of
# the rendered chart by test/e2e/helm.)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
helm=bin/helm
promtool=bin/promtool
chart=charts/capstan
all=(--set metrics.serviceMonitor.enabled=true
	--set prometheusRule.enabled=true --set dashboard.enabled=true
	--set-json 'cloudProvider.sim.profile={"region":"us-west-2","zones":["us-west-2a"],"launchLatency":"1s"}'
	--set metrics.certSecretName=capstan-metrics-tls --set cloudProvider.sim.stateClaimName=capstan-sim-state)

"$helm" lint --strict "$chart"
"$helm" lint --strict "$chart" "${all[@]}"
"$helm" template capstan "$chart" --namespace capstan-system --include-crds >/dev/null
out=$("$helm" template capstan "$chart" --namespace capstan-system --api-versions monitoring.coreos.com/v1 "${all[@]}")
for kind in ServiceMonitor PrometheusRule ConfigMap PodDisruptionBudget; do
	grep -q "^kind: $kind$" <<<"$out" || { echo "the chart with every option on renders no $kind" >&2; exit 1; }
done

# rejects VALUES... MESSAGE: the install must fail and say why.
rejects() {
	local want=${*: -1} got
	if got=$("$helm" template capstan "$chart" "${@:1:$#-1}" 2>&1); then
		echo "the chart accepted $* (want: $want)" >&2
		exit 1
	fi
	grep -qF -- "$want" <<<"$got" || { echo "rejecting ${*:1:$#-1}, helm said: $got (want: $want)" >&2; exit 1; }
}
rejects --set replica=3 "additional properties 'replica' not allowed"
rejects --set controller.featureGates.Drfit=true "additional properties 'Drfit' not allowed"
rejects --set controller.batchIdleDuration=soon "/controller/batchIdleDuration"
rejects --set cloudProvider.name=aws "at '/cloudProvider/name': value must be 'sim'"
rejects --set controller.maxInstanceTypes=500 "/controller/maxInstanceTypes"

"$promtool" check rules "$chart/alerts/capstan.rules.yaml"
"$promtool" test rules "$chart/alerts/capstan.rules.test.yaml"
echo "chart: ok"
