#!/usr/bin/env bash
# Fuzzes /api/v1 with schemathesis from the committed openapi.json: starts the built server
# (bin/ctx.js, `npm run build`) on a free loopback port with a fresh data directory, authentication
# on, an API key with every scope, and the class rate limits lifted (CTX_SERVER__*_PER_MINUTE), so
# that the run exercises the endpoints rather than their 429s. Prints the number of requests and
# of 5xx answers; exits non-zero when any answer is a 5xx.
#
# Usage: schemathesis.sh [extra `st run` options, e.g. --max-examples 20 --seed 1]
#
# schemathesis (PyPI) is installed into a virtual environment outside the project:
# $CTX_SCHEMATHESIS_VENV, or /tmp/ctx-schemathesis. The HAR of every request and answer is left in
# the run's folder, printed at the end.
set -euo pipefail

REPO_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${CTX_SCHEMATHESIS_VENV:-/tmp/ctx-schemathesis}"
if [[ ! -x "$venv/bin/st" ]]; then
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install --quiet schemathesis >&2
fi

run="$(mktemp -d "${TMPDIR:-/tmp}/ctx-schemathesis-run.XXXXXX")"
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
export CTX_STORAGE__DATA_DIR="$run/data"
export CTX_SERVER__BIND="127.0.0.1:$port"
export CTX_AUTH__MODE=on
# A signing secret, so that token refresh runs rather than answering that it cannot sign.
CTX_AUTH__JWT_SECRET="$(python3 -c 'import secrets; print(secrets.token_hex(32))')"
export CTX_AUTH__JWT_SECRET
export CTX_EMBEDDINGS__PROVIDER=none
export CTX_LOG__LEVEL=error
export CTX_SERVER__SEARCH_PER_MINUTE=100000
export CTX_SERVER__INDEX_PER_MINUTE=100000
export CTX_SERVER__CONNECTORS_PER_MINUTE=100000
export CTX_SERVER__CONFIG_PER_MINUTE=100000
export CTX_SERVER__WRITE_PER_MINUTE=100000
export CTX_SERVER__TOOLS_PER_MINUTE=100000
export CTX_SERVER__MCP_PER_MINUTE=100000
export CTX_INGEST__ROOTS="$run"

ctx() { node "$REPO_DIR/bin/ctx.js" "$@"; }
scopes="$(node -e "import('$REPO_DIR/dist/src/domain/auth.js').then((m) => console.log(m.SCOPES.join(',')))")"
key="$(ctx keys create --scopes "$scopes" --tenant fuzz --json | node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => console.log(JSON.parse(s).api_key))')"

ctx serve >"$run/server.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT INT TERM
for _ in $(seq 1 120); do
  curl -fsS "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
  sleep 0.5
done

# PATCH /config runs last, on its own: the fuzzer's valid bodies lower the rate limits for what follows.
fuzz() {
  local har="$1"
  shift
  # From the run's folder: schemathesis and hypothesis keep their caches in the working directory.
  (cd "$run" && "$venv/bin/st" run "$REPO_DIR/openapi.json" \
    --url "http://127.0.0.1:$port/api/v1" \
    --header "X-API-Key: $key" \
    --generation-with-security-parameters false \
    --checks not_a_server_error \
    --report har --report-har-path "$har" \
    --no-color "$@")
}
status=0
fuzz "$run/requests.har" --exclude-operation-id patchConfig "$@" || status=$?
fuzz "$run/config.har" --include-operation-id patchConfig "$@" || status=$?

python3 - "$run/requests.har" "$run/config.har" <<'PY'
import json, sys
entries = [e for har in sys.argv[1:] for e in json.load(open(har))["log"]["entries"]]
errors = [e for e in entries if e["response"]["status"] >= 500]
print(f"requests: {len(entries)}, 5xx answers: {len(errors)}")
for e in errors[:20]:
    print(f"  {e['response']['status']} {e['request']['method']} {e['request']['url']}")
sys.exit(1 if errors else 0)
PY
echo "run folder: $run" >&2
exit "$status"
