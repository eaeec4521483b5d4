#!/usr/bin/env python3
"""The GPU check's full rehearsal on this machine's CPU, written to
results/bench_gpu_rehearsal.json (a benchmark, not a test: it takes the whole deadline's worth
of real work).

Runs `scripts/gpu_check.sh --all --device cpu --deadline D` (default 420, the GPU run's
default) and reports the command's wall time against its deadline, each stage's slice, wall
time and status, and whether the goal of issue 27 is met: the command ends inside its
deadline with every stage `ok` (or `skipped`, with the reason, for a CUDA stage).

Usage: scripts/bench_gpu_rehearsal.py [--deadline 420] [--out results/bench_gpu_rehearsal.json]
Needs the bundle (`make gpu-bundle`); `make bench-gpu-rehearsal` builds it first.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--deadline", type=float, default=420)
    ap.add_argument("--out", default=os.path.join(ROOT, "results/bench_gpu_rehearsal.json"))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="gpu-rehearsal-") as out:
        started = time.monotonic()
        p = subprocess.run([os.path.join(ROOT, "scripts/gpu_check.sh"), "--all", "--device", "cpu",
                            "--deadline", f"{args.deadline:g}", "--out", out],
                           capture_output=True, text=True, cwd=ROOT)
        wall = time.monotonic() - started
        try:
            with open(os.path.join(out, "summary.json")) as f:
                summary = json.load(f)
        except (OSError, ValueError) as e:
            print(f"bench_gpu_rehearsal: no summary.json ({e}); exit {p.returncode}\n{p.stderr[-3000:]}",
                  file=sys.stderr)
            return 1
        files = sorted(os.listdir(out))
    stages = {name: {"status": e.get("status"), "slice_s": summary.get("slices_s", {}).get(name),
                     "wall_s": e.get("wall_s"), "cut": e.get("cut"), "skipped": e.get("skipped")}
              for name, e in summary["stages"].items()}
    report = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": summary.get("machine"),
        "load_average_after": os.getloadavg(),
        "deadline_s": args.deadline,
        "wall_s": round(wall, 1),
        "exit_status": p.returncode,
        "files_in_out": files,
        "stages": stages,
        "goal": "ends inside the deadline; every stage ok (or skipped with a reason)",
        "met": wall < args.deadline and all(s["status"] in ("ok", "skipped") for s in stages.values()),
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(report, f, indent=2)
        f.write("\n")
    print(f"rehearsal: {report['wall_s']} s of {args.deadline:g} (exit {p.returncode})")
    for name, s in stages.items():
        print(f"  {name:<10} {s['status']:<8} {s['wall_s']:>6} s of a {s['slice_s']} s slice"
              + (f"  ({s['cut'] or s['skipped']})" if s['status'] != 'ok' else ""))
    print(f"goal {'met' if report['met'] else 'NOT met'}; wrote {args.out}")
    return 0 if report["met"] else 1


if __name__ == "__main__":
    sys.exit(main())
