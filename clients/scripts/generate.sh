#!/usr/bin/env bash
# Generates clients/python and clients/go from the bundled spec (openapi/dist/openapi.json;
# `npm run clients` at the root bundles it first), with openapi-generator 4.3.1.
# With --check it generates into a temporary directory and fails when the committed clients
# differ from what the spec gives.
set -euo pipefail
clients="$(cd "$(dirname "$0")/.." && pwd)"
spec="$clients/../openapi/dist/openapi.json"
check=false
[[ "${1:-}" == --check ]] && check=true

[[ -f "$spec" ]] || { echo "missing $spec: run \`npm run clients\` from the repository root" >&2; exit 1; }
command -v java >/dev/null || { echo 'openapi-generator needs Java (apt-get install default-jre-headless)' >&2; exit 1; }
jar="$(cd "$clients" && node -p "require.resolve('@openapitools/openapi-generator-cli/bin/openapi-generator.jar')")"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# generate LANGUAGE GENERATOR OPTIONS...: prepares the spec for LANGUAGE and writes $work/LANGUAGE.
generate() {
  local language="$1" generator="$2"
  shift 2
  node "$clients/scripts/prepare-spec.mjs" "$spec" "$work/$language.json" "$language"
  mkdir -p "$work/$language"
  cp "$clients/scripts/openapi-generator-ignore" "$work/$language/.openapi-generator-ignore"
  # The generator warns about every error response (allOf of Error and its codes; it keeps Error,
  # which is right): its log is shown only when it fails.
  if ! java -jar "$jar" generate -g "$generator" -i "$work/$language.json" -o "$work/$language" \
    --global-property apiTests=false,modelTests=false "$@" >"$work/$language.log" 2>&1; then
    cat "$work/$language.log" >&2
    echo "openapi-generator failed for $language" >&2
    exit 1
  fi
}

generate python python --package-name pipewright_client \
  --additional-properties projectName=pipewright-client,packageVersion=0.0.0
# No hosting address is claimed: the module is used through GOPATH or a `replace` directive.
generate go go-experimental --package-name pipewright \
  --git-host pipewright --git-user-id clients --git-repo-id go \
  --additional-properties packageVersion=0.0.0,enumClassPrefix=true

status=0
for language in python go; do
  if $check; then
    # What installing the client in place leaves behind (git ignores it too) is not a drift.
    if ! diff -r -q -x build -x '*.egg-info' -x __pycache__ "$work/$language" "$clients/$language"; then
      echo "clients/$language is out of date: run \`npm run clients\` and commit it" >&2
      status=1
    fi
  else
    rm -rf "${clients:?}/$language"
    mv "$work/$language" "$clients/$language"
    echo "wrote clients/$language"
  fi
done
exit $status
