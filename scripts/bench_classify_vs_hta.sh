#!/usr/bin/env bash
# `make bench-classify`: throughput and peak memory of `replay`'s trace parse + classify, the
# start-up of `replay --version` / `classify --help` and `replay predict` on the cudagraph
# trace, and HolisticTraceAnalysis (HTA, Meta's PyPI package) loading the very same file, in
# one run and one report.
#
#   scripts/bench_classify_vs_hta.sh        # writes results/bench_classify.json
#
# 1. `cargo bench -p replay-core --bench classify_throughput` replicates the largest trace of
#    ../shared/traces/kineto/ to >= 100 MB of plain JSON (target/bench/<trace>.replicated.json,
#    reused while it exists) and measures replay on it, in process and as a user runs the
#    `replay` executable (whole processes: start-up included); its report names that file
#    ("input").
# 2. A throw-away venv outside the project (HolisticTraceAnalysis is NOT a dependency of
#    replay) gets HolisticTraceAnalysis from PyPI. When it cannot be made (offline, no pip),
#    the report says so under "hta" ("unavailable": the reason) and replay's side is still
#    written.
# 3. Each HTA run is a fresh Python process that times `TraceAnalysis(trace_dir=DIR)` on a
#    folder holding only that file (a symlink to it): HTA's entry point, which finds the
#    file, reads its rank, parses it into a pandas DataFrame and aligns it. Peak memory is
#    the process's ru_maxrss (what /usr/bin/time -v reports), with the resident size after
#    `import hta` reported separately as the baseline.
#    HTA needs no change to the file: it looks for `"rank": N` in the trace and, finding
#    none (the replicated trace has no distributedInfo), warns and takes rank 0. It keeps
#    the complete ("X") events as DataFrame rows and drops instant, flow and metadata events.
#
# replay parses on every core it is given (the file is cut into one chunk per core); HTA
# parses one rank in-process, without its multiprocessing pool. MB = 10^6 bytes of
# uncompressed JSON.
#
# Environment:
#   HTA_VENV           the throw-away venv [/tmp/replay-hta-venv]; created when missing
#   HTA_VERSION        HolisticTraceAnalysis version to install [0.5.0]
#   HTA_RUNS           HTA runs, median taken [5]
#   REUSE_REPLAY_BENCH=1  skip the cargo bench and reuse target/bench/classify_throughput.json
#   OUT                the result file [results/bench_classify.json]
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

HTA_VENV=${HTA_VENV:-/tmp/replay-hta-venv}
HTA_VERSION=${HTA_VERSION:-0.5.0}
HTA_RUNS=${HTA_RUNS:-5}
OUT=${OUT:-results/bench_classify.json}
REPLAY_REPORT=$ROOT/target/bench/classify_throughput.json
PYTHON=${PYTHON:-python3}
# Same as the Makefile, so that cargo reuses the build `make` made instead of rebuilding.
export REPLAY_REQUIRE_NVCC=${REPLAY_REQUIRE_NVCC:-1}

case "$HTA_VENV" in
  "$ROOT"|"$ROOT"/*)
    echo "bench_classify_vs_hta: HTA_VENV must be outside the project ($HTA_VENV)" >&2
    exit 2 ;;
esac

# --- 1. replay (and the replicated trace) -------------------------------------------------
if [ "${REUSE_REPLAY_BENCH:-0}" = 1 ] && [ -f "$REPLAY_REPORT" ]; then
  echo "== replay: reusing $REPLAY_REPORT"
else
  echo "== replay: cargo bench -p replay-core --bench classify_throughput"
  BENCH_OUT=$REPLAY_REPORT cargo bench --locked -p replay-core --bench classify_throughput >/dev/null
fi
TRACE=$("$PYTHON" -c 'import json, sys; print(json.load(open(sys.argv[1]))["input"])' "$REPLAY_REPORT")
if [ ! -f "$TRACE" ]; then
  echo "bench_classify_vs_hta: the replicated trace $TRACE is gone: rerun without REUSE_REPLAY_BENCH" >&2
  exit 2
fi
echo "   input: $TRACE ($(stat -c %s "$TRACE") bytes)"

# --- 2. HTA in a throw-away venv ----------------------------------------------------------
work=$(mktemp -d "${TMPDIR:-/tmp}/replay-hta-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
: >"$work/hta_runs.jsonl"
HTA_UNAVAILABLE=""
if [ ! -x "$HTA_VENV/bin/python" ]; then
  echo "== creating $HTA_VENV"
  if ! "$PYTHON" -m venv "$HTA_VENV" >"$work/venv.log" 2>&1; then
    HTA_UNAVAILABLE="could not create a venv at $HTA_VENV ($PYTHON -m venv: $(tail -1 "$work/venv.log"))"
  fi
fi
if [ -z "$HTA_UNAVAILABLE" ] && ! "$HTA_VENV/bin/python" -c 'import sys
from importlib.metadata import version
sys.exit(version("HolisticTraceAnalysis") != sys.argv[1])' "$HTA_VERSION" 2>/dev/null; then
  echo "== pip install HolisticTraceAnalysis==$HTA_VERSION into $HTA_VENV"
  if ! "$HTA_VENV/bin/pip" install --quiet "HolisticTraceAnalysis==$HTA_VERSION" >"$work/pip.log" 2>&1; then
    HTA_UNAVAILABLE="pip could not install HolisticTraceAnalysis==$HTA_VERSION (offline?): $(grep -m1 -i error "$work/pip.log" || tail -1 "$work/pip.log")"
  fi
fi

# HTA takes a folder and loads every *.json / *.gz in it: give it one holding only the trace.
mkdir "$work/trace"
ln -s "$TRACE" "$work/trace/$(basename "$TRACE")"

cat >"$work/hta_load.py" <<'PY'
"""One HTA load in this fresh process; prints a JSON line."""
import json
import logging
import resource
import sys
import time

trace_dir = sys.argv[1]
from hta.configs.config import logger as hta_logger  # noqa: E402
from hta.trace_analysis import TraceAnalysis  # noqa: E402

hta_logger.setLevel(logging.ERROR)  # its per-phase timings go to stderr as warnings
baseline_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
usage0 = resource.getrusage(resource.RUSAGE_SELF)
start = time.perf_counter()
# include_last_profiler_step=True: keep every event HTA keeps, not all but the last step.
analysis = TraceAnalysis(trace_dir=trace_dir, include_last_profiler_step=True)
seconds = time.perf_counter() - start
usage1 = resource.getrusage(resource.RUSAGE_SELF)
cpu = (usage1.ru_utime - usage0.ru_utime) + (usage1.ru_stime - usage0.ru_stime)
ranks = sorted(analysis.t.traces)
df = analysis.t.get_trace(ranks[0])
print(json.dumps({
    "load_s": seconds,
    "cpu_s": cpu,
    "ranks": ranks,
    "rows": int(len(df)),
    "gpu_rows": int((df["stream"] >= 0).sum()),
    "baseline_rss_bytes": baseline_kib * 1024,
    "peak_rss_bytes": usage1.ru_maxrss * 1024,
}))
PY

if [ -n "$HTA_UNAVAILABLE" ]; then
  echo "== HTA unavailable: $HTA_UNAVAILABLE" >&2
else
  echo "== HTA $HTA_VERSION: $HTA_RUNS loads of the same file"
  for i in $(seq 1 "$HTA_RUNS"); do
    if ! "$HTA_VENV/bin/python" "$work/hta_load.py" "$work/trace" >"$work/run.json" 2>"$work/run.err"; then
      echo "bench_classify_vs_hta: HTA failed to load $TRACE:" >&2
      tail -20 "$work/run.err" >&2
      exit 1
    fi
    cat "$work/run.json" >>"$work/hta_runs.jsonl"
    echo "   run $i: $(cat "$work/run.json")"
  done
fi

# --- 3. the report ------------------------------------------------------------------------
mkdir -p "$(dirname "$OUT")"
"$PYTHON" - "$REPLAY_REPORT" "$work/hta_runs.jsonl" "$TRACE" "$HTA_VERSION" "$OUT" "$HTA_UNAVAILABLE" <<'PY'
import datetime
import json
import os
import platform
import statistics
import sys

replay_path, hta_path, trace, hta_version, out, hta_unavailable = sys.argv[1:]
replay = json.load(open(replay_path))
hta_runs = [json.loads(line) for line in open(hta_path) if line.strip()]
json_bytes = os.path.getsize(trace)
if replay["json_bytes"] != json_bytes:
    sys.exit(f"replay measured {replay['json_bytes']} bytes, the file has {json_bytes}")
mb = json_bytes / 1e6

def median(values):
    return statistics.median(values)

r_runs = replay["runs"]
r_peak = max(r["peak_rss_bytes"] for r in r_runs)
r_base = max(r["baseline_rss_bytes"] for r in r_runs)
r_mbps = median([r["mb_per_s"] for r in r_runs])
r_best = max(r["mb_per_s"] for r in r_runs)
r_cpu_mbps = median([r["cpu_mb_per_s"] for r in r_runs])

report = {
    "benchmark": "bench_classify",
    "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    "machine": {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
                "load_average_at_end": os.getloadavg(),
                "note": "wall-clock MB/s drop when other processes share the cores: "
                        "best_mb_per_s and the min_s of the process timings are less "
                        "sensitive to it"},
    "source_trace": replay["source_trace"],
    "input": trace,
    "json_bytes": json_bytes,
    "replay": {
        "what": "trace::load + signature::classify in process (the parse on every core), "
                "fresh process per run",
        "runs": len(r_runs),
        "median_mb_per_s": r_mbps,
        "best_mb_per_s": r_best,
        "median_cpu_mb_per_s": r_cpu_mbps,
        "cpu_note": "CPU time of the main thread only: the other cores' share of the parse "
                    "is not in it",
        "median_s": median([r["total_s"] for r in r_runs]),
        "events": r_runs[0]["events"],
        "gpu_activities": r_runs[0]["gpu_activities"],
        "signatures": r_runs[0]["signatures"],
        "peak_rss_bytes": r_peak,
        "baseline_rss_bytes": r_base,
        "peak_over_json": r_peak / json_bytes,
        "added_rss_bytes": r_peak - r_base,
        "added_over_json": (r_peak - r_base) / json_bytes,
        "end_to_end": {
            "what": "`replay classify --trace FILE --out F.json`, whole processes as a user "
                    "runs them",
            **replay["end_to_end"],
            "mb_per_s": replay["end_to_end_mb_per_s"],
            "goal_mb_per_s": replay["goal_end_to_end_mb_per_s"],
            "peak_over_json": replay["end_to_end"]["peak_rss_bytes"] / json_bytes,
        },
        "startup": replay["startup"],
        "goals": {k: v for k, v in replay.items() if k.startswith("goal_")},
    },
}
if hta_unavailable:
    report["hta"] = {"package": f"HolisticTraceAnalysis=={hta_version}",
                     "unavailable": hta_unavailable}
else:
    hta_runs = [json.loads(line) for line in open(hta_path) if line.strip()]
    h_peak = max(r["peak_rss_bytes"] for r in hta_runs)
    h_base = max(r["baseline_rss_bytes"] for r in hta_runs)
    h_mbps = median([mb / r["load_s"] for r in hta_runs])
    h_best = max(mb / r["load_s"] for r in hta_runs)
    h_cpu_mbps = median([mb / r["cpu_s"] for r in hta_runs])
    report["hta"] = {
        "package": f"HolisticTraceAnalysis=={hta_version}",
        "what": "TraceAnalysis(trace_dir=<folder holding the file>, "
                "include_last_profiler_step=True), default (JSON) parser backend, "
                "fresh process per run",
        "runs": len(hta_runs),
        "median_mb_per_s": h_mbps,
        "best_mb_per_s": h_best,
        "median_cpu_mb_per_s": h_cpu_mbps,
        "median_s": median([r["load_s"] for r in hta_runs]),
        "rows": hta_runs[0]["rows"],
        "gpu_rows": hta_runs[0]["gpu_rows"],
        "peak_rss_bytes": h_peak,
        "baseline_rss_bytes": h_base,
        "baseline_note": "resident after importing hta (python, pandas, numpy, plotly)",
        "peak_over_json": h_peak / json_bytes,
        "added_rss_bytes": h_peak - h_base,
        "added_over_json": (h_peak - h_base) / json_bytes,
        "notes": "no rank in the file: HTA warns and uses rank 0; rows are the complete "
                 "('X') events, instant/flow/metadata events are not kept",
        "per_run": hta_runs,
    }
    report["ratio"] = {
        "mb_per_s_replay_over_hta": r_mbps / h_mbps,
        "best_mb_per_s_replay_over_hta": r_best / h_best,
        "end_to_end_replay_over_hta_in_process": replay["end_to_end_mb_per_s"] / h_mbps,
        "peak_rss_hta_over_replay": h_peak / r_peak,
        "added_rss_hta_over_replay": (h_peak - h_base) / (r_peak - r_base),
    }
report["replay_report"] = replay_path
with open(out, "w") as f:
    json.dump(report, f, indent=2)
    f.write("\n")
e2e = report["replay"]["end_to_end"]
startup = replay["startup"]
print(f"replay {r_mbps:.1f} MB/s in process, {e2e['mb_per_s']:.1f} MB/s end to end, peak "
      f"{r_peak / 1e6:.0f} MB ({r_peak / json_bytes:.2f}x); predict on the cudagraph trace "
      f"{startup['predict_cudagraph_trace']['median_s'] * 1e3:.1f} ms, --version "
      f"{startup['version']['median_s'] * 1e3:.1f} ms, classify --help "
      f"{startup['classify_help']['median_s'] * 1e3:.1f} ms (medians)")
if hta_unavailable:
    print(f"HTA unavailable: {hta_unavailable}")
else:
    h = report["hta"]
    print(f"HTA {h['median_mb_per_s']:.2f} MB/s, peak {h['peak_rss_bytes'] / 1e6:.0f} MB "
          f"({h['peak_over_json']:.2f}x); replay is "
          f"{report['ratio']['mb_per_s_replay_over_hta']:.1f}x faster in process")
print(f"written to {out}")
PY
