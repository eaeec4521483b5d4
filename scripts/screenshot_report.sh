#!/usr/bin/env bash
# Renders a report.html in headless Chromium (Debian's package) and saves a PNG, so a person can
# look at what `replay compare` shows. Usage: scripts/screenshot_report.sh [results/report.html] [out.png]
set -euo pipefail
html=${1:-results/report.html}
png=${2:-${html%.html}.png}
[ -f "$html" ] || { echo "no $html: run replay compare first" >&2; exit 2; }
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "chromium not found: apt-get install chromium" >&2; exit 2; }
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
"$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$profile" --window-size=1200,1400 --hide-scrollbars \
  --screenshot="$(realpath -m "$png")" "file://$(realpath "$html")" >/dev/null 2>&1
[ -s "$png" ] || { echo "chromium wrote no screenshot" >&2; exit 1; }
echo "wrote $png"
