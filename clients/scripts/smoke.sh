#!/usr/bin/env bash
# Smoke tests of the generated clients: starts the built server on 127.0.0.1 over HTTPS with a
# fresh data directory, then runs clients/test/python (pytest) and clients/test/go (go test)
# against it. Needs `npm run build` first, and what .ci/run installs: Debian's python3 with
# python3-urllib3 python3-dateutil python3-six python3-certifi python3-pytest python3-pip
# python3-setuptools, golang-go and golang-golang-x-oauth2-dev (Go builds in GOPATH mode: no
# module download).
set -euo pipefail
clients="$(cd "$(dirname "$0")/.." && pwd)"
root="$(cd "$clients/.." && pwd)"
server_bin="$root/apps/server/bin/pipewright-server.js"
# Debian's interpreter, where the apt packages are (a python3 earlier in PATH may lack them).
python="${PYTHON:-/usr/bin/python3}"

[[ -f "$root/apps/server/dist/main.js" ]] || { echo 'the server is not built: run `npm run build`' >&2; exit 1; }

work="$(mktemp -d)"
server_pid=""
cleanup() {
  if [[ -n "$server_pid" ]]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

node "$server_bin" --listen 127.0.0.1:0 --data-dir "$work/data" \
  >"$work/server.out" 2>"$work/server.log" &
server_pid=$!

# The URL comes from the server's JSON "listening" log line (the port is ephemeral).
url=""
for _ in $(seq 150); do
  url="$(node -e '
    const lines = require("fs").readFileSync(process.argv[1], "utf8").split("\n");
    const entry = lines.filter((l) => l.startsWith("{")).map((l) => JSON.parse(l)).find((e) => e.message === "listening");
    process.stdout.write(entry?.url ?? "");' "$work/server.log")"
  [[ -n "$url" ]] && break
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.2
done
if [[ -z "$url" ]]; then
  cat "$work/server.log" >&2
  echo 'the server did not start' >&2
  exit 1
fi
export PIPEWRIGHT_URL="$url"
export PIPEWRIGHT_API_KEY="$(cat "$work/data/admin-api-key")"
export PIPEWRIGHT_CA_FILE="$work/data/tls/cert.pem"
echo "server: $PIPEWRIGHT_URL"

failed=()

echo '--- Python client'
# Installed the way the README tells users to (from a copy: pip builds in the source tree),
# into a directory of its own; nothing is downloaded: the dependencies are Debian's packages.
cp -R "$clients/python" "$work/python-source"
if "$python" -m pip install --quiet --root-user-action=ignore --no-deps --no-build-isolation --no-index \
  --target "$work/python" "$work/python-source" &&
  PYTHONPATH="$work/python" PYTHONDONTWRITEBYTECODE=1 "$python" -m pytest -p no:cacheprovider -q "$clients/test/python"; then
  :
else
  failed+=(python)
fi

echo '--- Go client'
# GOPATH mode: the client is the package pipewright/clients/go (its module path), the test
# imports it; golang.org/x/oauth2 comes from Debian's /usr/share/gocode.
gopath="$work/gopath"
mkdir -p "$gopath/src/pipewright/clients"
cp -R "$clients/go" "$gopath/src/pipewright/clients/go"
cp -R "$clients/test/go" "$gopath/src/pipewright/smoke"
if (cd "$gopath/src/pipewright/smoke" &&
  GO111MODULE=off GOPATH="$gopath:/usr/share/gocode" GOCACHE="$work/gocache" GOFLAGS= go test -count=1 -v .); then
  :
else
  failed+=(go)
fi

if ((${#failed[@]})); then
  echo "smoke tests failed: ${failed[*]}" >&2
  exit 1
fi
echo 'smoke tests passed: python, go'
