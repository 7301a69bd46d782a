#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance) against the server's
# Streamable HTTP endpoint. The suite needs Node 22; both it and Node 22 (the `node` npm package)
# are installed, pinned, into a cache folder outside the project's node_modules.
#
# Usage:
#   mcpConformance.sh --install    install into the cache folder; prints the folder on stdout
#   mcpConformance.sh --url URL [scenario...]
#                                  run the scenarios (default: the six below) against a running
#                                  server; URL ends in /mcp
#   mcpConformance.sh              start the built server (bin/ctx.js, `npm run build`) on a free
#                                  loopback port with a fresh data directory, and run them
#
# The folder is $CTX_MCP_CONFORMANCE_DIR, or ${CTX_MODEL_CACHE:-$HOME/.cache/context-ledger}/conformance.
# Exits non-zero when a scenario fails. Everything but the --install answer goes to stderr.
set -euo pipefail

NODE_VERSION=22.23.3
CONFORMANCE_VERSION=0.1.16
SCENARIOS=(server-initialize ping tools-list resources-list prompts-list dns-rebinding-protection)

REPO_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="${CTX_MCP_CONFORMANCE_DIR:-${CTX_MODEL_CACHE:-$HOME/.cache/context-ledger}/conformance}"
node22="$dir/node_modules/node/bin/node"
suite="$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js"

installed() {
  [[ -x "$node22" && -f "$suite" ]] &&
    [[ "$("$node22" -p 'process.versions.node')" == "$NODE_VERSION" ]] &&
    [[ "$("$node22" -p "require('$dir/node_modules/@modelcontextprotocol/conformance/package.json').version")" == "$CONFORMANCE_VERSION" ]]
}

install() {
  if ! installed; then
    mkdir -p "$dir"
    cat >"$dir/package.json" <<JSON
{
  "name": "context-ledger-mcp-conformance",
  "private": true,
  "dependencies": {
    "node": "$NODE_VERSION",
    "@modelcontextprotocol/conformance": "$CONFORMANCE_VERSION"
  }
}
JSON
    # The `node` package fetches its platform's binary in an install script.
    (cd "$dir" && npm install --no-audit --no-fund --loglevel=error >&2)
    installed || { echo "could not install Node $NODE_VERSION and the conformance suite into $dir" >&2; exit 1; }
  fi
  echo "$dir"
}

run_scenarios() {
  local url="$1" failed=() results
  shift
  [ "$#" -gt 0 ] && SCENARIOS=("$@")
  results="$(mktemp -d)"
  for scenario in "${SCENARIOS[@]}"; do
    echo "--- $scenario" >&2
    if "$node22" "$suite" server --url "$url" --scenario "$scenario" --output-dir "$results" >&2; then
      echo "PASSED $scenario" >&2
    else
      echo "FAILED $scenario" >&2
      failed+=("$scenario")
    fi
  done
  rm -rf "$results"
  if [ "${#failed[@]}" -gt 0 ]; then
    echo "MCP conformance: ${#failed[@]} of ${#SCENARIOS[@]} scenarios failed: ${failed[*]}" >&2
    return 1
  fi
  echo "MCP conformance: all ${#SCENARIOS[@]} scenarios passed" >&2
}

not_installed() {
  echo "The MCP conformance suite is not installed in $dir: run 'bash scripts/mcpConformance.sh --install'" >&2
  exit 2
}

case "${1:-}" in
  --install)
    install
    ;;
  --url)
    installed || not_installed
    shift
    run_scenarios "${1:?--url needs the MCP URL of a running server}" "${@:2}"
    ;;
  "")
    installed || not_installed
    [ -f "$REPO_DIR/dist/src/cli/ctx.js" ] || { echo "No build: run 'npm run build' first" >&2; exit 2; }
    data="$(mktemp -d)"
    log="$data/server.log"
    port="$(node -e "const s = require('node:net').createServer().listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close(); })")"
    CTX_EMBEDDINGS__PROVIDER=none CTX_LOG__LEVEL=info \
      node "$REPO_DIR/bin/ctx.js" serve --bind "127.0.0.1:$port" --data-dir "$data/ledger" >"$log" 2>&1 &
    server=$!
    trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null; rm -rf "$data"' EXIT
    for _ in $(seq 1 120); do
      grep -q 'Context Ledger is serving' "$log" && break
      kill -0 "$server" 2>/dev/null || { cat "$log" >&2; echo "The server did not start" >&2; exit 1; }
      sleep 0.5
    done
    grep -q 'Context Ledger is serving' "$log" || { cat "$log" >&2; echo "The server did not start in time" >&2; exit 1; }
    run_scenarios "http://127.0.0.1:$port/mcp"
    ;;
  *)
    echo "usage: $0 [--install | --url <mcp-url>]" >&2
    exit 2
    ;;
esac
