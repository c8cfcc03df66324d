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
# The aws provider renders its flags and no simulated kubelet's role.
aws=$("$helm" template capstan "$chart" --namespace capstan-system --set cloudProvider.name=aws --set cloudProvider.aws.clusterName=prod --set cloudProvider.aws.interruptionQueue=prod-events)
for want in "--cloud-provider=aws" "--cluster-name=prod" "--interruption-queue=prod-events"; do
	grep -qF -- "$want" <<<"$aws" || { echo "the aws values do not render $want" >&2; exit 1; }
done
if grep -qF -- "sim-kubelet" <<<"$aws" || grep -qF -- "--sim-state" <<<"$aws"; then
	echo "the aws values render the simulated cloud's role or state" >&2
	exit 1
fi
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
rejects --set cloudProvider.name=gcp "at '/cloudProvider/name': value must be one of 'sim', 'aws'"
rejects --set cloudProvider.name=aws "cloudProvider.aws.clusterName is required with the aws provider"
rejects --set cloudProvider.name=aws --set cloudProvider.aws.clusterName=prod --set cloudProvider.aws.vmMemoryOverheadPercent=1 "/cloudProvider/aws/vmMemoryOverheadPercent"
rejects --set controller.maxInstanceTypes=500 "/controller/maxInstanceTypes"

"$promtool" check rules "$chart/alerts/capstan.rules.yaml"
"$promtool" test rules "$chart/alerts/capstan.rules.test.yaml"
echo "chart: ok"
