#!/usr/bin/env bash
# `make bench-quant-torchao`: replay bench quant against torchao's quantize_ on the same
# bfloat16 Linear, on the CPU (scripts/bench_quant_vs_torchao.py says how). Writes
# results/bench_quant_torchao.json and a markdown table beside it (.md).
#
# torchao is NEVER a dependency of replay: it goes into a throw-away venv outside the project
# that reuses the project's torch through a .pth file (as the scan anchors' venv does), so
# torchao runs on the very torch that replay links and nothing large is downloaded. When the
# venv cannot be made or torchao cannot be installed (offline), the script says so, exits 3.
#
# Environment: TORCHAO_VENV [/tmp/replay-quant-torchao], TORCHAO_VERSION [0.18.0], RUNS [3],
# CALLS [100], OUT [results/bench_quant_torchao.json].
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
TORCHAO_VENV=${TORCHAO_VENV:-/tmp/replay-quant-torchao}
TORCHAO_VERSION=${TORCHAO_VERSION:-0.18.0}
OUT=${OUT:-results/bench_quant_torchao.json}
PYTHON=${PYTHON:-python3}
REPLAY=${REPLAY_BIN:-$ROOT/target/release/replay}

source scripts/throwaway_venv.sh
if [ ! -x "$REPLAY" ]; then
  echo "bench_quant_vs_torchao: $REPLAY is missing: run make build first" >&2
  exit 2
fi
throwaway_venv bench_quant_vs_torchao TORCHAO_VENV "$TORCHAO_VENV"
if ! "$TORCHAO_VENV/bin/python" -c "import torchao, sys; sys.exit(torchao.__version__ != '$TORCHAO_VERSION')" 2>/dev/null; then
  echo "== pip install torchao==$TORCHAO_VERSION into $TORCHAO_VENV"
  if ! "$TORCHAO_VENV/bin/pip" install --quiet "torchao==$TORCHAO_VERSION"; then
    echo "bench_quant_vs_torchao: pip could not install torchao (offline?)" >&2
    exit 3
  fi
fi
mkdir -p "$(dirname "$OUT")"
# Kineto's "no GPU" line and torchao's deprecation chatter are not ours to show.
PYTHONWARNINGS=ignore "$TORCHAO_VENV/bin/python" scripts/bench_quant_vs_torchao.py \
  --replay "$REPLAY" --runs "${RUNS:-3}" --calls "${CALLS:-100}" --out "$OUT" 2> >(grep -v "gpuGetDeviceCount" >&2)
echo "== wrote $OUT and ${OUT%.json}.md"
