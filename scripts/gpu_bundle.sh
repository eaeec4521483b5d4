#!/usr/bin/env bash
# Makes target/gpu-bundle/: what a lent GPU machine needs that does not travel with the working
# tree (only tracked and untracked-not-ignored files do, 64 MiB in all; ../shared stays here):
#   bin/replay               the release binaries: replay (torch-free) and replay-torch (links
#   bin/replay-torch         libtorch dynamically: the GPU machine's torch must be the one it was
#                            built against, see torch_version)
#   torch_version            that torch version, checked by scripts/gpu_check.sh before anything runs
#   traces/                  the H100 traces of ../shared/traces/kineto and their TraceLens reports;
#                            traces/et/ PARAM's linear Execution Trace pair of ../shared/traces/et
#   scripts/                 the Python helpers, as built (the check reads them from here)
#   models/bloom-tiny.pt     the selftest's model (small: carried; bloom-560m is 2.2 GB and is
#                            exported there, in the background while the selftest runs)
#   manifest.json            commit, build time, sizes
# Usage: scripts/gpu_bundle.sh [BUNDLE_DIR] [--archive]   (the binary must be built: `make
# gpu-bundle` does it, with --archive)
#
# --archive also writes BUNDLE_DIR.tar.xz (about 10 MiB against the folder's 37), the one to
# carry: on 2026-11-30 the folder and the working tree (with .git) together were refused as
# over 64 MiB. scripts/gpu_check.sh unpacks it there when the folder is absent.
set -euo pipefail
cd "$(dirname "$0")/.."

BUNDLE=target/gpu-bundle
ARCHIVE=0
for arg in "$@"; do
  case "$arg" in
    --archive) ARCHIVE=1 ;;
    -*) echo "gpu_bundle: unknown option $arg (usage: scripts/gpu_bundle.sh [BUNDLE_DIR] [--archive])" >&2; exit 2 ;;
    *) BUNDLE=$arg ;;
  esac
done
BIN=${REPLAY_BIN:-target/release/replay}
TORCH_BIN=$(dirname "$BIN")/replay-torch
TRACES=${REPLAY_SHARED_TRACES:-../shared/traces/kineto}
LIMIT_MIB=48

for b in "$BIN" "$TORCH_BIN"; do
  [ -x "$b" ] || { echo "gpu_bundle: $b is not built (run make build)" >&2; exit 2; }
done
[ -d "$TRACES" ] || { echo "gpu_bundle: $TRACES not found (the shared traces sit beside the checkout)" >&2; exit 2; }

rm -rf "$BUNDLE.tmp"
mkdir -p "$BUNDLE.tmp/bin" "$BUNDLE.tmp/traces" "$BUNDLE.tmp/scripts"
cp "$BIN" "$BUNDLE.tmp/bin/replay"
cp "$TORCH_BIN" "$BUNDLE.tmp/bin/replay-torch"
# Debug sections are dead weight on the GPU machine and count towards the carry limit.
strip --strip-debug "$BUNDLE.tmp/bin/replay" "$BUNDLE.tmp/bin/replay-torch" 2>/dev/null || true
for name in h100_bert_small_infer h100_vit_infer; do
  cp "$TRACES/$name.json.gz" "$BUNDLE.tmp/traces/"
  cp -r "$TRACES/$name.reference" "$BUNDLE.tmp/traces/"
done
# PARAM's linear Execution Trace pair (the truth stage's re-run with data flow).
ET_PAIR=${REPLAY_SHARED_ET:-$(dirname "$TRACES")/et}
if [ -f "$ET_PAIR/linear_kineto.json.gz" ] && [ -f "$ET_PAIR/linear_et.json.gz" ]; then
  mkdir -p "$BUNDLE.tmp/traces/et"
  cp "$ET_PAIR/linear_kineto.json.gz" "$ET_PAIR/linear_et.json.gz" "$BUNDLE.tmp/traces/et/"
fi
cp scripts/*.py scripts/*.sh "$BUNDLE.tmp/scripts/"
# Exported once and kept where scripts/gpu_check.py keeps its models.
MODELS=${REPLAY_GPU_CHECK_MODELS:-target/gpu-check-models}
if [ ! -s "$MODELS/bloom-tiny.pt" ]; then
  mkdir -p "$MODELS"
  "$BIN" export --model bloom-tiny --out "$MODELS/bloom-tiny.pt" >/dev/null
fi
mkdir -p "$BUNDLE.tmp/models"
cp "$MODELS/bloom-tiny.pt" "$BUNDLE.tmp/models/"
chmod -R u+w "$BUNDLE.tmp"

.venv/bin/python - "$BUNDLE.tmp" <<'PY'
import json, os, subprocess, sys, time
import torch
bundle = sys.argv[1]
with open(os.path.join(bundle, "torch_version"), "w") as f:
    f.write(torch.__version__ + "\n")
def size(path):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)
commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
dirty = bool(subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                            capture_output=True, text=True).stdout.strip())
manifest = {
    "commit": commit + ("-dirty" if dirty else ""),
    "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    "torch_version": torch.__version__,
    "files": {name: size(os.path.join(bundle, name)) for name in sorted(os.listdir(bundle))},
}
manifest["total_bytes"] = size(bundle)
with open(os.path.join(bundle, "manifest.json"), "w") as f:
    json.dump(manifest, f, indent=2)
PY

bytes=$(du -sb "$BUNDLE.tmp" | cut -f1)
if [ "$bytes" -gt $((LIMIT_MIB * 1024 * 1024)) ]; then
  echo "gpu_bundle: $bytes bytes is over the $LIMIT_MIB MiB budget (64 MiB travel in all)" >&2
  rm -rf "$BUNDLE.tmp"
  exit 1
fi
rm -rf "$BUNDLE"
mv "$BUNDLE.tmp" "$BUNDLE"
echo "gpu_bundle: $BUNDLE ($((bytes / 1024)) KiB, torch $(cat "$BUNDLE/torch_version"))"
if [ "$ARCHIVE" = 1 ]; then
  tar -C "$(dirname "$BUNDLE")" -cf - "$(basename "$BUNDLE")" | xz -T0 -6 > "$BUNDLE.tar.xz.tmp"
  mv "$BUNDLE.tar.xz.tmp" "$BUNDLE.tar.xz"
  archive=$(stat -c %s "$BUNDLE.tar.xz")
  # What travels with it: the tracked files and the repository's .git (both counted there).
  tree=$(git ls-files -z | xargs -0 stat -c %s 2>/dev/null | awk '{s += $1} END {print s + 0}')
  git_dir=$(du -sb "$(git rev-parse --git-dir)" | cut -f1)
  travel=$((archive + tree + git_dir))
  echo "gpu_bundle: $BUNDLE.tar.xz ($((archive / 1024)) KiB): carry it, not the folder; with the working tree" \
       "and .git about $((travel / 1048576)) MiB travel of 64"
  if [ "$travel" -gt $((60 * 1024 * 1024)) ]; then
    echo "gpu_bundle: warning: over 60 MiB would travel: the device tool may refuse it" >&2
  fi
fi
