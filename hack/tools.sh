#!/usr/bin/env bash
# Builds the control-plane binaries and dev tools into bin/, keyed by version,
# skipping whatever is already there, so only a fresh machine pays the build.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/bin"
tools="$root/hack/tools"

K8S_VERSION=$(awk '$1=="k8s.io/kubernetes"{print $2}' "$tools/go.mod")
ETCD_VERSION=$(awk '$1=="go.etcd.io/etcd/server/v3"{print $2}' "$tools/go.mod")
KWOK_VERSION=v0.8.0
CONTROLLER_GEN_VERSION=v0.23.0
GOLANGCI_LINT_VERSION=v2.15.0
HELM_VERSION=v3.22.0
# Prometheus's Go module version of promtool 3.x.
PROMTOOL_VERSION=v0.316.0
CFN_LINT_NPM_VERSION=1.9.7

k8s_dir="$bin/k8s-$K8S_VERSION"
mkdir -p "$k8s_dir"

build() { # dir, name, package[, ldflags]
	if [ ! -x "$1/$2" ]; then
		echo "building $2 ($3)"
		(cd "$tools" && CGO_ENABLED=0 go build -trimpath ${4:+-ldflags "$4"} -o "$1/$2.tmp" "$3")
		mv "$1/$2.tmp" "$1/$2"
	fi
}

# The Kubernetes binaries report their release (as release builds do), so
# clients that read the server's version, such as EKS AMI aliases, see
# 1.37 rather than v0.0.0-master.
k8s_minor=${K8S_VERSION#v1.}
k8s_minor=${k8s_minor%%.*}
k8s_version_flags="-X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$k8s_minor"
install() { # dir, name, package@version[, build tags]
	if [ ! -x "$1/$2" ]; then
		echo "installing $3"
		GOBIN="$1" CGO_ENABLED=0 go install ${4:+-tags "$4"} "$3"
	fi
}

build "$k8s_dir" etcd go.etcd.io/etcd/server/v3
build "$k8s_dir" kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver "$k8s_version_flags"
build "$k8s_dir" kube-scheduler k8s.io/kubernetes/cmd/kube-scheduler "$k8s_version_flags"
build "$k8s_dir" kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager "$k8s_version_flags"

kwok_dir="$bin/kwok-$KWOK_VERSION"
install "$kwok_dir" kwok "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
if [ ! -d "$kwok_dir/stage" ]; then
	src=$(go env GOMODCACHE)/sigs.k8s.io/kwok@$KWOK_VERSION/kustomize/stage
	rm -rf "$kwok_dir/stage.tmp"
	# Only the stage YAML: the module's Go test files would join ./... here.
	(cd "$src" && find . -name '*.yaml' -exec install -D -m 0644 {} "$kwok_dir/stage.tmp/{}" \;)
	mv "$kwok_dir/stage.tmp" "$kwok_dir/stage"
fi

# Kueue's manager, which test/e2e/batch runs, from its own module
# (hack/kueue): Kueue pins Kubernetes libraries other than Capstan's. With
# it, from the module cache, what the harness (pkg/test/kueue.go) installs:
# Kueue's CRDs with the kustomization naming those its conversion webhook
# serves, its webhook configurations, and the ProvisioningRequest CRD of
# the autoscaler API module Kueue is built with.
kueue_mod="$root/hack/kueue"
KUEUE_VERSION=$(cd "$kueue_mod" && go list -m -f '{{.Version}}' sigs.k8s.io/kueue)
kueue_dir="$bin/kueue-$KUEUE_VERSION"
if [ ! -x "$kueue_dir/kueue" ]; then
	echo "building kueue ($KUEUE_VERSION)"
	rm -rf "$kueue_dir.tmp"
	mkdir -p "$kueue_dir.tmp"
	(cd "$kueue_mod" && CGO_ENABLED=0 go build -trimpath -ldflags "-X sigs.k8s.io/kueue/pkg/version.GitVersion=$KUEUE_VERSION" -o "$kueue_dir.tmp/kueue" sigs.k8s.io/kueue/cmd/kueue)
	src=$(cd "$kueue_mod" && go list -m -f '{{.Dir}}' sigs.k8s.io/kueue)
	apis=$(cd "$kueue_mod" && go list -m -f '{{.Dir}}' k8s.io/autoscaler/cluster-autoscaler/apis)
	(cd "$src/config/components" && find crd webhook -name '*.yaml' -exec install -D -m 0644 {} "$kueue_dir.tmp/{}" \;)
	command install -D -m 0644 "$apis/config/crd/autoscaling.x-k8s.io_provisioningrequests.yaml" "$kueue_dir.tmp/provisioningrequest/autoscaling.x-k8s.io_provisioningrequests.yaml"
	mv "$kueue_dir.tmp" "$kueue_dir"
fi

install "$bin/controller-gen-$CONTROLLER_GEN_VERSION" controller-gen "sigs.k8s.io/controller-tools/cmd/controller-gen@$CONTROLLER_GEN_VERSION"
install "$bin/golangci-lint-$GOLANGCI_LINT_VERSION" golangci-lint "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$GOLANGCI_LINT_VERSION"
# The chart's checks (hack/verify-chart.sh) and install e2e (test/e2e/helm).
install "$bin/helm-$HELM_VERSION" helm "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
# promtool without Prometheus's service discovery plugins (remove_all_sd):
# rule checks and tests need none, and the cloud SDKs would more than
# treble its build (one of them is not on the module proxy either).
install "$bin/promtool-$PROMTOOL_VERSION" promtool "github.com/prometheus/prometheus/cmd/promtool@$PROMTOOL_VERSION" remove_all_sd

# The CloudFormation linter `make verify` runs (hack/verify-cfn.sh): the
# npm registry's cfn-lint, the one these machines can install (PyPI,
# where AWS's own cfn-lint lives, is out of reach; Debian 12 packages
# none). Its bundled resource specification predates properties the
# template uses; they are added to it here, each with the type the
# CloudFormation resource reference gives it.
if [ ! -x "$bin/cfn-lint-npm-$CFN_LINT_NPM_VERSION/node_modules/.bin/cfn-lint" ]; then
	echo "installing cfn-lint@$CFN_LINT_NPM_VERSION (npm)"
	rm -rf "$bin/cfn-lint-npm-$CFN_LINT_NPM_VERSION.tmp"
	npm install --silent --no-audit --no-fund --prefix "$bin/cfn-lint-npm-$CFN_LINT_NPM_VERSION.tmp" "cfn-lint@$CFN_LINT_NPM_VERSION" >/dev/null
	node -e '
		const f = process.argv[1] + "/node_modules/cfn-lint/data/aws_resources_specification.json";
		const spec = require(f);
		// AWS::SQS::Queue SqsManagedSseEnabled (2021): SSE-SQS encryption.
		spec.ResourceTypes["AWS::SQS::Queue"].Properties.SqsManagedSseEnabled = {PrimitiveType: "Boolean", Required: false, UpdateType: "Mutable"};
		require("fs").writeFileSync(f, JSON.stringify(spec));
	' "$bin/cfn-lint-npm-$CFN_LINT_NPM_VERSION.tmp"
	mv "$bin/cfn-lint-npm-$CFN_LINT_NPM_VERSION.tmp" "$bin/cfn-lint-npm-$CFN_LINT_NPM_VERSION"
fi

# pkg/report's test renders the HTML report in headless Chromium, Debian's
# package: the one browser these machines can install.
if ! command -v chromium >/dev/null; then
	echo "installing chromium (Debian package)"
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	$sudo apt-get update -qq
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi

# Stable names for the Makefile, tests and people.
ln -sfn "k8s-$K8S_VERSION" "$bin/k8s"
ln -sfn "kwok-$KWOK_VERSION" "$bin/kwok"
ln -sfn "kueue-$KUEUE_VERSION" "$bin/kueue"
ln -sfn "controller-gen-$CONTROLLER_GEN_VERSION/controller-gen" "$bin/controller-gen"
ln -sfn "golangci-lint-$GOLANGCI_LINT_VERSION/golangci-lint" "$bin/golangci-lint"
ln -sfn "helm-$HELM_VERSION/helm" "$bin/helm"
ln -sfn "promtool-$PROMTOOL_VERSION/promtool" "$bin/promtool"
ln -sfn "cfn-lint-npm-$CFN_LINT_NPM_VERSION/node_modules/.bin/cfn-lint" "$bin/cfn-lint-npm"
