#!/usr/bin/env bash
# Fails when generated files (CRDs, deepcopy, go.mod/go.sum) differ from what
# `make generate` produces: snapshot, regenerate, compare. Works on a dirty
# tree, so it checks the change being made, not only what is committed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
snapshot=$(mktemp -d)
trap 'rm -rf "$snapshot"' EXIT
paths=(api config charts docs/iam deploy go.mod go.sum)
cp -r --parents "${paths[@]}" "$snapshot"/
make --no-print-directory generate >/dev/null
status=0
for p in "${paths[@]}"; do
	if ! diff -r -u "$snapshot/$p" "$p"; then
		status=1
	fi
done
if [ "$status" -ne 0 ]; then
	echo "generated files were stale and have been regenerated: review and commit them" >&2
fi
exit "$status"
