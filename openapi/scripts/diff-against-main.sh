#!/usr/bin/env bash
# Compare the working spec (openapi/ as it is on disk, uncommitted edits
# included) with the spec committed on a git ref, `main` by default, and rate
# every change with `redocly diff`: "major" changes break existing clients.
#
# Usage: bash openapi/scripts/diff-against-main.sh [REF] [redocly diff options]
#   e.g. npm run spec:diff
#        bash openapi/scripts/diff-against-main.sh main --format=markdown
#        bash openapi/scripts/diff-against-main.sh HEAD~3 --fail-on=none
# Exit status: 0 when nothing at or above --fail-on (default: major) changed,
# 1 otherwise (redocly's own status), 2 on a usage problem.
set -euo pipefail

spec_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
repo=$(git -C "$spec_dir" rev-parse --show-toplevel)
prefix=$(git -C "$spec_dir" rev-parse --show-prefix)
prefix=${prefix%/}

ref=main
if [[ $# -gt 0 && $1 != -* ]]; then
  ref=$1
  shift
fi

redocly=""
for candidate in "$repo/node_modules/.bin/redocly" "$spec_dir/node_modules/.bin/redocly"; do
  if [[ -x $candidate ]]; then redocly=$candidate; break; fi
done
if [[ -z $redocly ]]; then
  echo "redocly not found: run npm ci at the root of the repository first" >&2
  exit 2
fi
export REDOCLY_TELEMETRY=off

if ! git -C "$repo" rev-parse --verify --quiet "$ref^{commit}" >/dev/null; then
  echo "unknown git ref: $ref" >&2
  exit 2
fi
if ! git -C "$repo" cat-file -e "$ref:$prefix/openapi.yaml" 2>/dev/null; then
  echo "$ref has no $prefix/openapi.yaml yet: every route of the working spec is new."
  exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Both specs are bundled with their own redocly.yaml, each into one file.
git -C "$repo" archive "$ref" "$prefix" | tar -x -C "$tmp"
(cd "$tmp/$prefix" && "$redocly" bundle openapi.yaml -o "$tmp/base.json" >/dev/null 2>&1) || {
  echo "could not bundle the spec of $ref" >&2
  exit 2
}
(cd "$spec_dir" && "$redocly" bundle openapi.yaml -o "$tmp/working.json" >/dev/null 2>&1) || {
  echo "could not bundle the working spec: run redocly lint openapi.yaml in $prefix" >&2
  exit 2
}

echo "Changes of the working spec against $ref ($(git -C "$repo" rev-parse --short "$ref")):"
cd "$spec_dir"
"$redocly" diff "$tmp/base.json" "$tmp/working.json" "$@"
