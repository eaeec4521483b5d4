#!/usr/bin/env bash
# Builds the Python package of the torch-free core (crates/python: distribution
# `replay-kernels`, import `replay_kernels`) into one abi3 wheel with maturin and installs it
# into .venv. Run by scripts/setup (so by `make run` and `make test`); cargo makes a rebuild
# with no change a no-op, and the wheel is reinstalled only when its bytes changed.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=.venv
PY=$(pwd)/$VENV/bin/python
TARGET=${CARGO_TARGET_DIR:-$(pwd)/target}
WHEELS=$TARGET/wheels
# The same interpreter for maturin's build and cargo's (the Makefile exports it), so pyo3's
# build script does not run again between them.
export PYO3_PYTHON=$PY

mkdir -p "$WHEELS"
"$VENV/bin/maturin" build --release --locked -m crates/python/Cargo.toml \
  --interpreter "$PY" --out "$WHEELS" >"$WHEELS/build.log" 2>&1 || {
  cat "$WHEELS/build.log" >&2
  echo "install_python_package: maturin could not build crates/python" >&2
  exit 1
}
wheel=$(ls -t "$WHEELS"/replay_kernels-*.whl | head -1)
stamp=$WHEELS/installed.sha256
sum=$(sha256sum "$wheel" | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$sum" ] || ! "$PY" -c 'import replay_kernels' 2>/dev/null; then
  "$PY" -m pip install --disable-pip-version-check --quiet --no-deps --force-reinstall "$wheel"
  echo "$sum" >"$stamp"
fi
echo "setup: replay_kernels $("$PY" -c 'import replay_kernels; print(replay_kernels.__version__)') installed from $(basename "$wheel")"
