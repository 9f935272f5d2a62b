#!/usr/bin/env bash
# Retakes the README's screenshots of the viewer: a demo project with the
# example agent logs in docs/examples imported, served on loopback and
# opened in headless chromium, light and dark.
#   bash docs/screenshots.sh [path/to/logbook]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# Made absolute without `realpath`, which macOS lacks before 13.
logbook=${1:-$here/../target/release/logbook}
logbook=$(cd "$(dirname "$logbook")" && pwd)/$(basename "$logbook")
work=$(mktemp -d)
trap 'kill "${server:-}" 2>/dev/null || true; rm -rf "$work"' EXIT
"$logbook" demo "$work/project" >/dev/null
cd "$work/project"
"$logbook" transcript import "$here/examples/claude/projects" >/dev/null
"$logbook" transcript import "$here/examples/codex/sessions" >/dev/null
# Debian's chromium, else Chromium or Chrome where macOS installs them
# (never on PATH there); CHROMIUM names another.
browser=${CHROMIUM:-}
if [ -z "$browser" ]; then
    for b in chromium chromium-browser google-chrome \
        "/Applications/Chromium.app/Contents/MacOS/Chromium" \
        "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome"; do
        if command -v "$b" >/dev/null 2>&1; then browser=$b; break; fi
    done
fi
[ -n "$browser" ] || { echo "no chromium found: install it, or set CHROMIUM" >&2; exit 1; }
port=7797
"$logbook" serve --port "$port" >/dev/null 2>&1 &
server=$!
for _ in $(seq 50); do curl -fs "http://127.0.0.1:$port/api/runs" >/dev/null && break; sleep 0.1; done
shoot() { # name url height
    for mode in light dark; do
        # An empty array is "unbound" to macOS's bash 3.2 under set -u,
        # hence the ${flag[@]+…} below.
        flag=()
        [ "$mode" = dark ] && flag=(--force-dark-mode)
        "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
            --window-size=1280,"$3" ${flag[@]+"${flag[@]}"} --user-data-dir="$work/profile" \
            --screenshot="$here/$1-$mode.png" "http://127.0.0.1:$port$2" >/dev/null 2>&1
    done
}
shoot transcript /transcripts/7c0e5a52-3f1b-4d8e-9a61-2b94c1d0e7a3 1400
shoot transcripts /transcripts 700
shoot usage /usage 1100
