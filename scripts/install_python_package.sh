#!/usr/bin/env bash
# Installs the Python package of the torch-free core (crates/python: distribution
# `replay-kernels`, import `replay_kernels`) into .venv: the extension module that cargo built
# with the rest of the workspace (target/release/lib_native.so) and the package's Python
# files, packed into one abi3 wheel by scripts/python_wheel.py (its docstring says why not
# maturin here). Run by `make build` and `make test` after their cargo step; the wheel is
# reinstalled only when its bytes changed.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=.venv
PY=$(pwd)/$VENV/bin/python
TARGET=${CARGO_TARGET_DIR:-$(pwd)/target}
WHEELS=$TARGET/wheels

wheel=$("$PY" scripts/python_wheel.py --lib "$TARGET/release/lib_native.so" --out "$WHEELS")
stamp=$WHEELS/installed.sha256
sum=$(sha256sum "$wheel" | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$sum" ] || ! "$PY" -c 'import replay_kernels' 2>/dev/null; then
  "$PY" -m pip install --disable-pip-version-check --quiet --no-deps --force-reinstall "$wheel"
  echo "$sum" >"$stamp"
fi
echo "setup: replay_kernels $("$PY" -c 'import replay_kernels; print(replay_kernels.__version__)') installed from $(basename "$wheel")"
