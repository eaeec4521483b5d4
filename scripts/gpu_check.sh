#!/usr/bin/env bash
# The prepared check of a lent GPU machine (and, with --device cpu, of this one): every stage
# in one command that ends before its deadline (`--help` lists the stages and their slices).
#
#   scripts/gpu_check.sh --all [--deadline 420] [--device cuda|cpu] [--quick] [--out DIR]
#   scripts/gpu_check.sh --stage NAME [...]
#
# Run from the repository root with target/gpu-bundle/ present (`make gpu-bundle` here; carry
# it to the GPU machine). This wrapper finds a Python whose torch is the one the bundled binary
# was built against (refusing clearly otherwise), puts that torch's libraries on the library
# path, and hands over to scripts/gpu_check.py, which runs the stages and writes their figures
# into DIR/summary.json. `--help` lists the stages.
set -euo pipefail
# The deadline counts from here: the checks below (importing torch) are part of the command.
export REPLAY_GPU_CHECK_T0=${REPLAY_GPU_CHECK_T0:-$(date +%s.%N)}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUNDLE=${REPLAY_GPU_BUNDLE:-$ROOT/target/gpu-bundle}

# The interpreter: $REPLAY_PYTHON, the project's .venv, or the machine's python3 (the GPU
# machines' python3 is the one that holds torch).
if [ -n "${REPLAY_PYTHON:-}" ]; then
  PY=$REPLAY_PYTHON
elif [ -x "$ROOT/.venv/bin/python" ]; then
  PY=$ROOT/.venv/bin/python
else
  PY=python3
fi

for arg in "$@"; do
  case "$arg" in
    -h|--help) exec "$PY" "$ROOT/scripts/gpu_check.py" --help ;;
  esac
done

# The bundle travels as target/gpu-bundle.tar.xz (`make gpu-bundle`): unpacked here the first time.
if [ ! -x "$BUNDLE/bin/replay" ] && [ -f "$BUNDLE.tar.xz" ]; then
  tar -C "$(dirname "$BUNDLE")" -xJf "$BUNDLE.tar.xz"
fi
if [ ! -x "$BUNDLE/bin/replay" ]; then
  echo "gpu_check: $BUNDLE/bin/replay not found: run 'make gpu-bundle' and carry target/gpu-bundle.tar.xz" >&2
  exit 2
fi

torch_info=$("$PY" -c 'import os, torch; print(torch.__version__); print(os.path.dirname(torch.__file__))' 2>/dev/null) || {
  echo "gpu_check: $PY cannot import torch; set REPLAY_PYTHON to a Python that has torch $(cat "$BUNDLE/torch_version")" >&2
  exit 2
}
have_version=$(sed -n 1p <<<"$torch_info")
torch_dir=$(sed -n 2p <<<"$torch_info")
want_version=$(cat "$BUNDLE/torch_version")
# The local build (+cu130) and the machine's torch must be the same release: libtorch's C++
# ABI changes between minor versions, and a mismatch fails at load time with missing symbols.
if [ "${have_version%%+*}" != "${want_version%%+*}" ]; then
  echo "gpu_check: the bundled replay was built against torch $want_version but $PY has torch $have_version;" >&2
  echo "gpu_check: rebuild with the matching torch (scripts/setup pins it) or point REPLAY_PYTHON at one with $want_version" >&2
  exit 2
fi

# libtorch, and the CUDA libraries of the nvidia-* wheels beside it (cuBLAS, cudart, NVRTC for
# cudarc's dlopen), ahead of the build machine's paths compiled into the binary.
site=$(dirname "$torch_dir")
libs=$torch_dir/lib
for d in "$site"/nvidia/cu13/lib "$site"/nvidia/*/lib; do
  [ -d "$d" ] && libs=$libs:$d
done
export LD_LIBRARY_PATH=$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export REPLAY_PYTHON=$PY
export REPLAY_SCRIPTS_DIR=$BUNDLE/scripts
export REPLAY_BIN=$BUNDLE/bin/replay
export REPLAY_GPU_BUNDLE=$BUNDLE
export PYTHONUNBUFFERED=1
cd "$ROOT"
exec "$PY" "$ROOT/scripts/gpu_check.py" "$@"
