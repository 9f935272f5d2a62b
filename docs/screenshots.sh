#!/usr/bin/env bash
# Retakes the README's screenshots of the viewer: a demo project with the
# example agent logs in docs/examples imported, served on loopback and
# opened in headless chromium, light and dark.
#   bash docs/screenshots.sh [path/to/logbook]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
logbook=$(realpath "${1:-$here/../target/release/logbook}")
work=$(mktemp -d)
trap 'kill "${server:-}" 2>/dev/null || true; rm -rf "$work"' EXIT
"$logbook" demo "$work/project" >/dev/null
cd "$work/project"
"$logbook" transcript import "$here/examples/claude/projects" >/dev/null
"$logbook" transcript import "$here/examples/codex/sessions" >/dev/null
port=7797
"$logbook" serve --port "$port" >/dev/null 2>&1 &
server=$!
for _ in $(seq 50); do curl -fs "http://127.0.0.1:$port/api/runs" >/dev/null && break; sleep 0.1; done
shoot() { # name url height
    for mode in light dark; do
        flag=()
        [ "$mode" = dark ] && flag=(--force-dark-mode)
        chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
            --window-size=1280,"$3" "${flag[@]}" --user-data-dir="$work/profile" \
            --screenshot="$here/$1-$mode.png" "http://127.0.0.1:$port$2" >/dev/null 2>&1
    done
}
shoot transcript /transcripts/7c0e5a52-3f1b-4d8e-9a61-2b94c1d0e7a3 1400
shoot transcripts /transcripts 700
shoot usage /usage 1100
