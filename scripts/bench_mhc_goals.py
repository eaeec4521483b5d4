#!/usr/bin/env python3
"""The mHC suite's speed goals from `replay bench mhc` results (issue 18), as JSON.

  bench_mhc_goals.py results/mhc/benchmark_results.csv [...] --out results/bench_mhc.json

For every configuration (Device, BatchSize, SeqLen, Dim, NumStreams, Dtype) that has both
implementations: fused vs torch per stage as the ratio of medians, with the range the
samples allow (torch's min / fused's max .. torch's max / fused's min), and whether the goals
hold: the fused Sinkhorn at least 10x faster than torch's, the whole pipeline (stage 5) faster.
A stage torch could not run (an oom row) is reported with its status, never as a ratio.
"""
import argparse
import csv
import json
import sys

KEY = ("Device", "BatchSize", "SeqLen", "Dim", "NumStreams", "Dtype")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", nargs="+")
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    runs = {}
    for path in args.csv:
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                runs.setdefault(tuple(row[k] for k in KEY), {}).setdefault(row["Case"], {}) \
                    .setdefault(row["Impl"], []).append(row)
    report = []
    for key, cases in runs.items():
        entry = dict(zip(KEY, key))
        entry["stages"] = {}
        for case, impls in cases.items():
            if "Copy" in case or "torch" not in impls or "fused" not in impls:
                continue
            t, f = impls["torch"][-1], impls["fused"][-1]
            if t["Status"] != "ok" or f["Status"] != "ok":
                entry["stages"][case] = {"torch_status": t["Status"], "fused_status": f["Status"],
                                         "fused_ms": float(f["Time(ms)"]) if f["Time(ms)"] else None}
                continue
            tm, fm = float(t["Time(ms)"]), float(f["Time(ms)"])
            entry["stages"][case] = {
                "torch_ms": tm, "fused_ms": fm, "speedup": round(tm / fm, 2),
                "speedup_range": [round(float(t["Time_min(ms)"]) / float(f["Time_max(ms)"]), 2),
                                  round(float(t["Time_max(ms)"]) / float(f["Time_min(ms)"]), 2)],
            }
        sk = entry["stages"].get("H_res Gen (Sinkhorn-Knopp)", {})
        total = entry["stages"].get("Total", {})
        entry["goals"] = {
            "fused_sinkhorn_at_least_10x": sk.get("speedup", 0) >= 10 if "speedup" in sk else None,
            "fused_pipeline_faster": total.get("speedup", 0) > 1 if "speedup" in total else None,
        }
        report.append(entry)
    with open(args.out, "w") as f:
        json.dump({"configurations": report}, f, indent=2)
        f.write("\n")
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
