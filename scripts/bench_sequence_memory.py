#!/usr/bin/env python3
"""`replay sequence`'s memory on the shared traces (issue 51, part B).

For each trace of ../shared/traces (or those named with --traces): `replay sequence --device cpu
--max-time 5 --memory-budget 8G`, reading from its sequence.json the plan (the sum of every
op's inputs, i.e. the footprint without a plan, and the planned peak) and the measured peak, and
the process's peak resident set (GNU time). With --before BIN (a `replay` built without the plan),
the same command without --memory-budget gives the step time and resident peak before the plan,
for the step-time comparison. A trace is skipped when the command is refused (exit 2: its reason
is kept) or runs past --timeout seconds. Writes results/bench_sequence_memory.json and the table
of docs/benchmarks/sequence-memory.md.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "traces"


def run(binary, trace, out, budget, max_time, timeout):
    cmd = [str(binary), "sequence", "--trace", str(trace), "--device", "cpu",
           "--max-time", str(max_time), "-q", "--output-dir", str(out)]
    if budget:
        cmd += ["--memory-budget", budget]
    started = time.time()
    try:
        p = subprocess.run(["/usr/bin/time", "-f", "maxrss_kb=%M", *cmd], capture_output=True,
                           text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "wall_s": timeout}
    rss = None
    for line in p.stderr.splitlines():
        if line.startswith("maxrss_kb="):
            rss = int(line.split("=", 1)[1]) * 1024
    result = {"exit": p.returncode, "wall_s": round(time.time() - started, 1),
              "max_rss_bytes": rss}
    if p.returncode != 0:
        # The command's own error line (not GNU time's).
        lines = [l for l in p.stderr.splitlines() if l and not l.startswith(("maxrss_kb=", "Command exited"))]
        result["status"] = "refused" if p.returncode == 2 else ("killed" if p.returncode < 0 or p.returncode == 137 else "failed")
        result["error"] = lines[-1] if lines else ""
        return result
    seq = json.loads((out / "sequence.json").read_text())
    result["status"] = "ok"
    result["ops"] = len(seq["entries"])
    result["ran"] = sum(1 for e in seq["entries"] if e["status"] == "ok")
    result["oom"] = sum(1 for e in seq["entries"] if e["status"] == "oom")
    result["runs_median_us"] = (seq.get("runs") or {}).get("median_us")
    rt = seq.get("real_time")
    result["real_time_median_us"] = rt["step_us"]["median_us"] if rt else None
    result["memory"] = seq.get("memory")
    return result


def gib(b):
    return "" if b is None else f"{b / 2**30:.3f}"


def pct(a, b):
    return "" if not a or not b else f"{(a / b - 1) * 100:+.1f} %"


def table(rows):
    lines = [
        "| trace | ops | sum of op inputs (GiB, today) | planned peak (GiB) | measured peak (GiB) | measured / plan | step before (ms) | step after (ms) | change |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        a = r["after"]
        if a.get("status") != "ok":
            lines.append(f"| {r['trace']} | | | | | | | | {a.get('status')}: {a.get('error', '')[:120]} |")
            continue
        m = a["memory"] or {}
        b = r.get("before") or {}
        before = b.get("runs_median_us") if b.get("status") == "ok" else None
        after = a.get("runs_median_us")
        ratio = (m.get("measured_peak_bytes") or 0) / m["planned_peak_bytes"] if m.get("planned_peak_bytes") else None
        lines.append(
            f"| {r['trace']} | {a['ran']}/{a['ops']} | {gib(m.get('unshared_bytes'))} | "
            f"{gib(m.get('planned_peak_bytes'))} | {gib(m.get('measured_peak_bytes'))} | "
            f"{'' if ratio is None else f'{ratio:.2f}'} | "
            f"{'' if before is None else f'{before / 1000:.1f}'} | "
            f"{'' if after is None else f'{after / 1000:.1f}'} | {pct(after, before)} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--traces", nargs="*", help="traces (default: every *.json.gz of ../shared/traces)")
    ap.add_argument("--binary", default=str(ROOT / "target" / "release" / "replay"))
    ap.add_argument("--before", help="a replay binary without the memory plan, for the step time before")
    ap.add_argument("--budget", default="8G")
    ap.add_argument("--max-time", type=float, default=5.0)
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--out", default=str(ROOT / "results" / "bench_sequence_memory.json"))
    args = ap.parse_args()
    traces = [Path(t) for t in args.traces] if args.traces else sorted(
        p for p in SHARED.rglob("*.json.gz") if not p.name.endswith("_et.json.gz"))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, trace in enumerate(traces):
            name = str(trace.relative_to(SHARED)) if SHARED in trace.parents else str(trace)
            print(f"[{i + 1}/{len(traces)}] {name}", file=sys.stderr, flush=True)
            row = {"trace": name}
            row["after"] = run(args.binary, trace, Path(tmp) / f"a{i}", args.budget, args.max_time, args.timeout)
            if args.before and row["after"].get("status") == "ok":
                row["before"] = run(args.before, trace, Path(tmp) / f"b{i}", None, args.max_time, args.timeout)
            print(f"  {row['after'].get('status')} {row['after'].get('error', '')}", file=sys.stderr)
            rows.append(row)
    before_commit = None
    if args.before:
        before_commit = subprocess.run(["git", "-C", str(Path(args.before).resolve().parents[2]), "rev-parse", "--short", "HEAD"],
                                       capture_output=True, text=True).stdout.strip() or None
    result = {
        "command": f"replay sequence --device cpu --max-time {args.max_time} --memory-budget {args.budget}",
        "before": args.before, "before_commit": before_commit,
        "cpu_count": os.cpu_count(), "rows": rows, "table": table(rows),
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(result["table"])
    print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
