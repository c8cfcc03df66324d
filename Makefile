# Capstan — see README.md. Every target builds what it needs.
SHELL := bash
.SHELLFLAGS := -euo pipefail -c

BIN := $(CURDIR)/bin
CONTROLLER_GEN := $(BIN)/controller-gen
GOLANGCI_LINT := $(BIN)/golangci-lint
# The release: the chart's appVersion, stamped into the binary so `capstan
# version` of the image names the tag the chart deploys.
VERSION := $(shell sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}$$/\1/p' charts/capstan/Chart.yaml)
LDFLAGS := -X github.com/capstan-dev/capstan/pkg/version.version=$(VERSION)
export KUBEBUILDER_ASSETS := $(BIN)/k8s

TEST_TIMEOUT ?= 10m
E2E_TIMEOUT ?= 15m
# The controller policies test/e2e/aws runs under, once each: the local
# endpoint refuses what IAM would refuse under them (docs/iam).
IAM_POLICIES := docs/iam/karpenter-controller-policy.yaml docs/iam/capstan-controller-policy.yaml

.PHONY: all build image generate verify tools test unit e2e bench demo cluster clean

all: build

build: ## Build the capstan binary into bin/.
	go build -ldflags "$(LDFLAGS)" -o $(BIN)/capstan ./cmd/capstan

image: ## The container image as an OCI archive, bin/capstan-image.tar (reproducible, no registry reached).
	CGO_ENABLED=0 GOOS=linux go build -trimpath -buildvcs=false -ldflags "-s -w $(LDFLAGS)" -o $(BIN)/image/capstan ./cmd/capstan
	go run ./hack/image -binary $(BIN)/image/capstan -o $(BIN)/capstan-image.tar

tools: ## Build the control-plane binaries and dev tools (skips what exists).
	./hack/tools.sh

generate: tools ## Regenerate CRDs, deepcopy and RBAC.
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./api/...
	$(CONTROLLER_GEN) crd paths=./api/... output:crd:artifacts:config=config/crd
	# ProvisioningRequest's CRD as sig-autoscaling publishes it, from the module Capstan builds against.
	install -m 644 "$$(go list -m -f '{{.Dir}}' k8s.io/autoscaler/cluster-autoscaler/apis)/config/crd/autoscaling.x-k8s.io_provisioningrequests.yaml" config/crd/
	go run ./hack/crdpatch config/crd
	$(CONTROLLER_GEN) rbac:roleName=capstan paths="./cmd/...;./pkg/providers/..." output:rbac:artifacts:config=config/rbac
	$(CONTROLLER_GEN) rbac:roleName=capstan-sim-kubelet paths=./pkg/cloudprovider/sim/... output:rbac:stdout > config/rbac/sim-kubelet.yaml
	go run ./hack/chartgen
	go run ./hack/cfnpolicy
	go mod tidy

verify: tools ## Regenerate, vet and lint; fail if anything generated was stale.
	./hack/verify-generated.sh
	go run ./hack/catalog -check
	./hack/verify-chart.sh
	./hack/verify-cfn.sh
	go vet -tags e2e ./...
	$(GOLANGCI_LINT) run ./...

unit: tools ## Unit and envtest tests.
	go test -timeout $(TEST_TIMEOUT) ./...

e2e: tools build ## End-to-end tests on the local control plane (the controller is bin/capstan-e2e, built with its test-only hooks; test/e2e/aws runs it against bin/ec2endpoint).
	go build -tags e2e -o $(BIN)/capstan-e2e ./cmd/capstan
	go build -o $(BIN)/ec2endpoint ./hack/ec2endpoint
	go test -tags e2e -p 1 -count 1 -timeout $(E2E_TIMEOUT) $$(go list -tags e2e ./test/e2e/... | grep -v '/test/e2e/aws$$')
	for policy in $(IAM_POLICIES); do \
		CAPSTAN_E2E_IAM_POLICY=$(CURDIR)/$$policy go test -tags e2e -p 1 -count 1 -timeout $(E2E_TIMEOUT) ./test/e2e/aws; \
	done

test: unit e2e ## Everything CI runs.

bench: ## Scheduling benchmarks (pods/s, nodes, cost/h, lowerbound/h, B/op, allocs/op) and peak RSS.
	go test -run '^$$' -bench . -benchmem -timeout 60m ./pkg/...
	go run ./hack/peakrss

demo: tools build ## The local cluster, capstan controller on the simulated cloud, examples/demo, live summary (Ctrl-C stops).
	go run ./hack/devcluster -demo

cluster: tools ## Start the local cluster (prints export KUBECONFIG=...) until Ctrl-C.
	go run ./hack/devcluster

clean:
	rm -rf $(BIN)
