#!/usr/bin/env bash
# Runs every fuzz target (fuzz/, cargo-fuzz + libFuzzer, nightly Rust) for FUZZ_SECONDS each:
#
#   scripts/fuzz.sh [TARGET ...]          (make fuzz; all targets when none is named)
#
#   FUZZ_SECONDS   seconds per target (default 60)
#   FUZZ_TIMEOUT   seconds one input may take before it is a hang (default 10)
#   FUZZ_RSS_MB    memory one run may use before it is an out-of-memory finding (default 2048)
#   FUZZ_BUILD=0   run the binaries already built in fuzz/target (no rebuild)
#   FUZZ_CORPUS_KB the most each target's committed corpus keeps after minimising (default 24:
#                  the smallest inputs first, which libFuzzer's merge also prefers)
#
# Each target grows its corpus in fuzz/corpus/TARGET/ (minimised after the run, committed);
# every crash, hang, out-of-memory or differential mismatch lands in fuzz/artifacts/TARGET/
# and is copied to fuzz/regressions/TARGET/, which `make test` replays from then on. The
# figures of each target's sitting (executions, seconds, CPU seconds, findings, date) are
# appended to results/fuzz.json. Exit status 1 when anything was found.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SECONDS_EACH=${FUZZ_SECONDS:-60}
TIMEOUT=${FUZZ_TIMEOUT:-10}
RSS_MB=${FUZZ_RSS_MB:-2048}
PYTHON=${PYTHON:-$ROOT/.venv/bin/python}
[ -x "$PYTHON" ] || PYTHON=python3
# The readers of the libtorch crate; their binaries link libtorch (the `torch` feature).
TORCH_TARGETS="quant_yaml npy input_spec"

if ! rustup toolchain list | grep -q '^nightly'; then
    rustup toolchain install nightly --profile minimal
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked
fi

ALL=$(sed -n 's/^name = "\(.*\)"$/\1/p' fuzz/Cargo.toml | grep -v '^replay-fuzz$')
TARGETS=${*:-$ALL}
for target in $TARGETS; do
    echo "$ALL" | grep -qx "$target" || { echo "fuzz.sh: no target '$target' (targets: $(echo $ALL))" >&2; exit 2; }
done

wants_torch=0
for target in $TARGETS; do
    case " $TORCH_TARGETS " in *" $target "*) wants_torch=1 ;; esac
done
features=()
if [ "$wants_torch" = 1 ]; then
    features=(--features torch)
    export LIBTORCH=${LIBTORCH:-$ROOT/.venv/libtorch}
    export LD_LIBRARY_PATH=$LIBTORCH/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
if [ "${FUZZ_BUILD:-1}" != 0 ]; then
    (cd fuzz && cargo +nightly fuzz build "${features[@]}")
fi
BIN=$ROOT/fuzz/target/x86_64-unknown-linux-gnu/release

found=0
mkdir -p results
for target in $TARGETS; do
    corpus=fuzz/corpus/$target
    artifacts=fuzz/artifacts/$target
    mkdir -p "$corpus" "$artifacts" "fuzz/regressions/$target"
    before=$(ls "$artifacts" | sort)
    log=$(mktemp)
    echo "== $target: ${SECONDS_EACH}s"
    start=$(date +%s.%N)
    # CPU time of the fuzzing process alone (the build is done): the change in bash's
    # `times` for its children.
    # (`times` itself, not in a $(...) subshell, whose children are not these.)
    times >"$log.times"
    cpu_before=$(tail -1 "$log.times")
    set +e
    "$BIN/$target" "$corpus" -artifact_prefix="$artifacts/" -max_total_time="$SECONDS_EACH" \
        -timeout="$TIMEOUT" -rss_limit_mb="$RSS_MB" -print_final_stats=1 >"$log" 2>&1
    status=$?
    set -e
    end=$(date +%s.%N)
    times >"$log.times"
    cpu_after=$(tail -1 "$log.times")
    tail -4 "$log"
    new_artifacts=$(comm -13 <(echo "$before") <(ls "$artifacts" | sort) | grep -v '^$' || true)
    for artifact in $new_artifacts; do
        cp "$artifacts/$artifact" "fuzz/regressions/$target/$artifact"
        echo "   found: fuzz/regressions/$target/$artifact"
        found=1
    done
    # Keep the corpus minimal: libFuzzer's merge into a fresh folder, which then replaces it.
    merged=$(mktemp -d)
    "$BIN/$target" -merge=1 "$merged" "$corpus" -timeout="$TIMEOUT" -rss_limit_mb="$RSS_MB" \
        >/dev/null 2>&1 && { rm -f "$corpus"/*; cp "$merged"/* "$corpus"/ 2>/dev/null || true; }
    rm -rf "$merged"
    # The corpus is committed and replayed by `make test`: the smallest inputs within the budget.
    budget=$(( ${FUZZ_CORPUS_KB:-24} * 1024 ))
    kept=0
    while read -r size file; do
        if [ $((kept + size)) -le "$budget" ]; then kept=$((kept + size)); else rm -f "$file"; fi
    done < <(find "$corpus" -type f -printf '%s %p\n' | sort -n -k1,1 -k2,2)
    # Under a lock: several fuzz.sh may run side by side (one per core), all recording here.
    flock results/.fuzz.json.lock "$PYTHON" scripts/fuzz_record.py --results results/fuzz.json --target "$target" \
        --log "$log" --start "$start" --end "$end" --times-before "$cpu_before" --times-after "$cpu_after" \
        --status "$status" --corpus "$corpus" --artifacts $new_artifacts
    rm -f "$log" "$log.times"
done
exit $found
