#!/usr/bin/env bash
# Lints the CloudFormation templates (docs/aws.md, "Infrastructure"):
# always with the npm registry's cfn-lint that hack/tools.sh installs
# (bin/cfn-lint-npm: resource types, properties, intrinsic functions and
# references), and also with AWS's cfn-lint (the PyPI package, current
# resource schemas) where it is installed; CI's machines cannot install
# that one, so its absence is said, not failed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# docs/iam/karpenter-controller-policy.yaml is an excerpt of the
# reference's template (its policies name resources it leaves out), not a
# template to deploy, so it is not linted.
templates=(deploy/aws/cloudformation.yaml docs/iam/capstan-controller-policy.yaml)
status=0
for t in "${templates[@]}"; do
	if ! out=$(bin/cfn-lint-npm validate "$t" 2>&1); then
		echo "$out" >&2
		echo "cfn-lint (npm) refuses $t" >&2
		status=1
	fi
done
if command -v cfn-lint >/dev/null; then
	if ! cfn-lint -- "${templates[@]}"; then
		echo "cfn-lint refuses a template" >&2
		status=1
	fi
else
	echo "note: AWS's cfn-lint (PyPI) is not installed; linted with the npm cfn-lint only" >&2
fi
exit "$status"
