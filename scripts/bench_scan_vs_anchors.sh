#!/usr/bin/env bash
# `make bench-scan-anchors`: replay's semiring scan (cpu and torch backends, through
# `replay scan --time`) against what a PyTorch user would pick instead, torch-struct 0.5 and
# flash-semicrf 0.2.0, on the CPU, on the inputs of `replay bench scan`, with their log-partitions
# checked against replay's. One report: results/bench_scan_anchors.json and a markdown table
# beside it (.md).
#
#   scripts/bench_scan_vs_anchors.sh                      # the seed's grid (long: tens of minutes)
#   T=128,256 K=4,8 C=3,6 scripts/bench_scan_vs_anchors.sh  # a smaller one
#
# The anchors are NEVER dependencies of replay: they go into a throw-away venv outside the
# project (flash-semicrf's licence is non-commercial: installed for comparison only, never
# shipped or copied). That venv reuses the project's torch through a .pth file, so the anchors
# run on the very torch that replay's `torch` backend links, and nothing large is downloaded.
# When the venv cannot be made or the packages cannot be installed (offline), the script says
# so and exits 3.
#
# Environment: ANCHOR_VENV [/tmp/replay-scan-anchors], T K C B REPEATS PHASES (the grid,
# default the seed's: T=128,256,512,1024 K=4,8,12,16,20,24 C=3,6,9,12 B=4 REPEATS=5,
# PHASES=forward,backward), MAX_MEMORY_GB [8] (torch-struct's estimate-based skip), OUT
# [results/bench_scan_anchors.json].
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
ANCHOR_VENV=${ANCHOR_VENV:-/tmp/replay-scan-anchors}
OUT=${OUT:-results/bench_scan_anchors.json}
PYTHON=${PYTHON:-python3}
REPLAY=${REPLAY_BIN:-$ROOT/target/release/replay}
export REPLAY_REQUIRE_NVCC=${REPLAY_REQUIRE_NVCC:-1}

source scripts/throwaway_venv.sh
if [ ! -x "$REPLAY" ]; then
  echo "bench_scan_vs_anchors: $REPLAY is missing: run make build first" >&2
  exit 2
fi
throwaway_venv bench_scan_vs_anchors ANCHOR_VENV "$ANCHOR_VENV"

if ! "$ANCHOR_VENV/bin/python" -c 'import torch_struct, flash_semicrf' 2>/dev/null; then
  echo "== pip install torch-struct==0.5 flash-semicrf==0.2.0 into $ANCHOR_VENV"
  if ! "$ANCHOR_VENV/bin/pip" install --quiet torch-struct==0.5 flash-semicrf==0.2.0; then
    echo "bench_scan_vs_anchors: pip could not install the anchors (offline?)" >&2
    exit 3
  fi
fi

mkdir -p "$(dirname "$OUT")"
# torch's own deprecation chatter from the anchors' old code is not ours to show.
PYTHONWARNINGS=ignore "$ANCHOR_VENV/bin/python" scripts/scan_anchors.py \
  --replay "$REPLAY" \
  --T "${T:-128,256,512,1024}" --K "${K:-4,8,12,16,20,24}" --C "${C:-3,6,9,12}" \
  --B "${B:-4}" --repeats "${REPEATS:-5}" --phases "${PHASES:-forward,backward}" \
  --max-memory-gb "${MAX_MEMORY_GB:-8}" --out "$OUT"
echo "== wrote $OUT and ${OUT%.json}.md"
