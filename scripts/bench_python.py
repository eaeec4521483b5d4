#!/usr/bin/env python3
"""`make bench-python`: the Python package of the torch-free core (replay_kernels) timed.

  .venv/bin/python scripts/bench_python.py [--runs N] [--hta-runs N] [--out FILE]

1. Import: `import replay_kernels` in a fresh interpreter, timed inside it (the
   interpreter's own start-up is not in it), median of --runs processes. Goal: < 50 ms.
2. A 1 MB trace (../shared/traces/kineto/h100_bert_small_infer.json.gz: 1.08 MB of JSON)
   loaded and classified, `load_trace(p).signatures()`, in one process after one warm-up:
   the arrow frame, and the pandas frame (pandas imported before). Goal: < 50 ms. Also the
   two ~1.2-1.4 MB gzipped files, which hold 35 and 26 MB of JSON (v100 resnet50, a100
   cudagraph), for scale.
3. `make bench-classify`'s >= 100 MB trace (target/bench/*.replicated.json; made by its cargo
   bench when missing): `load_trace(p).signatures()` (pandas) against HolisticTraceAnalysis
   0.5's `TraceAnalysis` load of the same file in a throw-away venv (/tmp/replay-hta-venv,
   created like bench_classify_vs_hta.sh does), each in fresh processes, alternating. Time
   and peak memory (ru_maxrss). Goals: >= 30x faster, <= half the peak memory.

Writes results/bench_python.json. The machine's load is recorded: figures from a machine
with other work on its two cores are not quiet ones.
"""

import argparse
import datetime
import gzip
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[1]
TRACES = REPO.parent / "shared" / "traces" / "kineto"
PY = sys.executable
HTA_VENV = pathlib.Path(os.environ.get("HTA_VENV", "/tmp/replay-hta-venv"))
HTA_VERSION = os.environ.get("HTA_VERSION", "0.5.0")
TARGET = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
ONE_MB = "h100_bert_small_infer.json.gz"

IMPORT = """
import time, json
t = time.perf_counter()
import replay_kernels
print(json.dumps({"s": time.perf_counter() - t}))
"""

SMALL = """
import json, sys, time
import pandas  # imported before: the frame's conversion, not pandas' import, is timed
import replay_kernels as rk
path, runs = sys.argv[1], int(sys.argv[2])
rk.load_trace(path).signatures()  # warm-up (page cache, first pyarrow use)
out = {}
for fmt in ("arrow", "pandas"):
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        frame = rk.load_trace(path).signatures(format=fmt)
        times.append(time.perf_counter() - t)
    out[fmt] = {"median_s": sorted(times)[len(times) // 2], "min_s": min(times), "runs": runs,
                "rows": len(frame)}
print(json.dumps(out))
"""

BIG = """
import json, resource, sys, time
import pandas
import replay_kernels as rk
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter()
frame = rk.load_trace(sys.argv[1]).signatures()
s = time.perf_counter() - t
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"load_s": s, "rows": len(frame), "baseline_rss_bytes": base * 1024,
                  "peak_rss_bytes": peak * 1024}))
"""

HTA = """
import json, logging, resource, sys, time
from hta.configs.config import logger as hta_logger
from hta.trace_analysis import TraceAnalysis
hta_logger.setLevel(logging.ERROR)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter()
analysis = TraceAnalysis(trace_dir=sys.argv[1], include_last_profiler_step=True)
s = time.perf_counter() - t
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
df = analysis.t.get_trace(sorted(analysis.t.traces)[0])
print(json.dumps({"load_s": s, "rows": int(len(df)), "baseline_rss_bytes": base * 1024,
                  "peak_rss_bytes": peak * 1024}))
"""


def run_json(python, code, *args):
    done = subprocess.run([str(python), "-c", code, *map(str, args)], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"bench_python: {python} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def median(rows, key):
    return statistics.median(r[key] for r in rows)


def big_trace():
    """bench-classify's replicated trace, made by its cargo bench when missing."""
    found = sorted((TARGET / "bench").glob("*.replicated.json"))
    found = [p for p in found if p.stat().st_size >= 100_000_000]
    if found:
        return found[0]
    print("== no >= 100 MB trace under target/bench: cargo bench -p replay-core --bench classify_throughput")
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, BENCH_OUT=os.path.join(tmp, "report.json"), REPLAY_REQUIRE_NVCC="1")
        subprocess.run(
            ["cargo", "bench", "--locked", "-p", "replay-core", "--bench", "classify_throughput"],
            cwd=REPO, env=env, check=True, stdout=subprocess.DEVNULL,
        )
        return pathlib.Path(json.load(open(env["BENCH_OUT"]))["input"])


def hta_python():
    """The throw-away venv's python with HolisticTraceAnalysis, or (None, why not)."""
    python = HTA_VENV / "bin" / "python"
    if not python.exists():
        print(f"== creating {HTA_VENV}")
        if subprocess.run(["python3", "-m", "venv", str(HTA_VENV)]).returncode != 0:
            return None, f"could not create a venv at {HTA_VENV}"
    have = subprocess.run(
        [str(python), "-c", "from importlib.metadata import version; print(version('HolisticTraceAnalysis'))"],
        capture_output=True, text=True,
    )
    if have.stdout.strip() != HTA_VERSION:
        print(f"== pip install HolisticTraceAnalysis=={HTA_VERSION} into {HTA_VENV}")
        done = subprocess.run(
            [str(HTA_VENV / "bin" / "pip"), "install", "--quiet", f"HolisticTraceAnalysis=={HTA_VERSION}"],
            capture_output=True, text=True,
        )
        if done.returncode != 0:
            return None, f"pip could not install HolisticTraceAnalysis=={HTA_VERSION}: {done.stderr[-300:]}"
    return python, None


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--big-runs", type=int, default=3)
    parser.add_argument("--out", default=str(REPO / "results" / "bench_python.json"))
    args = parser.parse_args()

    print("== import replay_kernels")
    imports = [run_json(PY, IMPORT)["s"] for _ in range(args.runs)]
    print(f"   median {statistics.median(imports) * 1e3:.1f} ms")

    small = {}
    for name in (ONE_MB, "v100_resnet50_train_pt19.json.gz", "a100_train_cudagraph_rank0.json.gz"):
        path = TRACES / name
        print(f"== load_trace + signatures: {name}")
        result = run_json(PY, SMALL, path, args.runs)
        result["file_bytes"] = path.stat().st_size
        with gzip.open(path) as f:
            result["json_bytes"] = len(f.read())
        small[name] = result
        print(f"   arrow {result['arrow']['median_s'] * 1e3:.1f} ms, pandas {result['pandas']['median_s'] * 1e3:.1f} ms")

    trace = big_trace()
    size = trace.stat().st_size
    print(f"== {trace} ({size} bytes)")
    python, unavailable = hta_python()
    ours, hta = [], []
    with tempfile.TemporaryDirectory() as tmp:
        folder = pathlib.Path(tmp) / "trace"
        folder.mkdir()
        (folder / trace.name).symlink_to(trace)
        for i in range(args.big_runs):
            ours.append(run_json(PY, BIG, trace))
            print(f"   replay_kernels run {i + 1}: {ours[-1]}")
            if python is not None:
                hta.append(run_json(python, HTA, folder))
                print(f"   HTA run {i + 1}: {hta[-1]}")

    side = {
        "what": "load_trace(FILE).signatures() (pandas frame), fresh process per run",
        "runs": len(ours),
        "median_s": median(ours, "load_s"),
        "min_s": min(r["load_s"] for r in ours),
        "median_peak_rss_bytes": median(ours, "peak_rss_bytes"),
        "baseline_rss_bytes": median(ours, "baseline_rss_bytes"),
        "rows": ours[0]["rows"],
        "runs_detail": ours,
    }
    report = {
        "benchmark": "bench_python",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": {
            "cores": os.cpu_count(),
            "load_average_at_end": list(os.getloadavg()),
            "note": "a load average near or above the core count means other work shared the cores: such figures are not quiet",
        },
        "import": {"median_s": statistics.median(imports), "min_s": min(imports), "runs": len(imports),
                   "goal_s": 0.05},
        "small_traces": {"goal_s": 0.05, "goal_trace": ONE_MB, **small},
        "big_trace": {"input": str(trace), "json_bytes": size, "replay_kernels": side},
    }
    if python is None:
        report["big_trace"]["hta"] = {"unavailable": unavailable}
    else:
        report["big_trace"]["hta"] = {
            "package": f"HolisticTraceAnalysis=={HTA_VERSION}",
            "what": "TraceAnalysis(trace_dir=<folder holding only the file>, include_last_profiler_step=True), fresh process per run",
            "runs": len(hta),
            "median_s": median(hta, "load_s"),
            "median_peak_rss_bytes": median(hta, "peak_rss_bytes"),
            "baseline_rss_bytes": median(hta, "baseline_rss_bytes"),
            "rows": hta[0]["rows"],
            "runs_detail": hta,
        }
        speedup = report["big_trace"]["hta"]["median_s"] / side["median_s"]
        memory = side["median_peak_rss_bytes"] / report["big_trace"]["hta"]["median_peak_rss_bytes"]
        report["goals"] = {
            "speedup_vs_hta": speedup,
            "speedup_goal": 30.0,
            "speedup_met": speedup >= 30.0,
            "peak_memory_ratio_vs_hta": memory,
            "peak_memory_goal": 0.5,
            "peak_memory_met": memory <= 0.5,
            # Above each side's own baseline (the interpreter with pandas, pyarrow / HTA imported).
            "added_memory_ratio_vs_hta": (side["median_peak_rss_bytes"] - side["baseline_rss_bytes"])
            / (report["big_trace"]["hta"]["median_peak_rss_bytes"] - report["big_trace"]["hta"]["baseline_rss_bytes"]),
            "import_met": report["import"]["median_s"] < 0.05,
            "small_trace_met": small[ONE_MB]["pandas"]["median_s"] < 0.05,
        }
    pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(report, f, indent=1)
        f.write("\n")
    print(json.dumps(report.get("goals", {}), indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
