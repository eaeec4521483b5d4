#!/usr/bin/env bash
# Regenerates the example signature files in signatures/ from the real H100 traces in
# ../shared/traces/kineto/ with the release binary (`replay classify`).
#
#   scripts/regenerate_signatures.sh            # (re)writes signatures/<trace>.json
#   scripts/regenerate_signatures.sh --check    # writes nothing; exits 1 if a committed
#                                               # file differs from what the binary makes now
#
# Environment:
#   REPLAY_BIN   the replay binary to use. Unset: `cargo build --release --locked` first,
#                then target/release/replay (`make signatures` builds and sets it).
#   TRACES_DIR   where the traces are [../shared/traces/kineto]
#
# The traces are passed by their path relative to the repository root, so the files'
# `source.path` is the same on every machine. Classification is deterministic: the same
# binary on the same trace writes the same bytes.
set -euo pipefail
cd "$(dirname "$0")/.."

TRACES=(h100_bert_small_infer h100_vit_infer)
TRACES_DIR=${TRACES_DIR:-../shared/traces/kineto}
OUT_DIR=signatures

check=false
case "${1:-}" in
  "") ;;
  --check) check=true ;;
  -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
  *) echo "regenerate_signatures: unknown argument '$1' (try --help)" >&2; exit 2 ;;
esac

if [ -z "${REPLAY_BIN:-}" ]; then
  cargo build --release --locked --bin replay
  REPLAY_BIN=target/release/replay
fi
if [ ! -x "$REPLAY_BIN" ]; then
  echo "regenerate_signatures: no replay binary at $REPLAY_BIN (run make build)" >&2
  exit 2
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/replay-signatures.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

stale=0
for name in "${TRACES[@]}"; do
  trace="$TRACES_DIR/$name.json.gz"
  if [ ! -f "$trace" ]; then
    echo "regenerate_signatures: trace $trace not found" >&2
    exit 2
  fi
  fresh="$tmp/$name.json"
  echo "== $name"
  # the table, without the binary's own "wrote <temporary file>" line
  "$REPLAY_BIN" classify --trace "$trace" --out "$fresh" | sed '/^wrote /d'
  target="$OUT_DIR/$name.json"
  if $check; then
    if cmp -s "$fresh" "$target"; then
      echo "up to date: $target"
    else
      echo "STALE: $target differs from what $REPLAY_BIN writes now (run make signatures)" >&2
      stale=1
    fi
  else
    mkdir -p "$OUT_DIR"
    mv "$fresh" "$target"
    echo "wrote $target"
  fi
done
exit "$stale"
