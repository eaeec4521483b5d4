#!/usr/bin/env python3
"""Benchmarks of `replay isolated` on the CPU, written to results/bench_isolated.json.

1. Coverage: the share of each H100 trace's GPU time whose signatures replay `ok` on the CPU
   at full size (goal >= 99 %), with every signature that does not and its reason.
2. Noise: `isolated` twice on the bert-small signatures; for every signature longer than
   50 us, the relative difference of the two medians (goal <= 2 %).

Usage: scripts/bench_isolated.py [--replay target/release/replay] [--threads N] [--budget S] [--rounds N]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def isolated(replay, sigs, out_dir, threads, budget, rounds, noise):
    cmd = [replay, "isolated", "--kernels", sigs, "--device", "cpu", "--quiet",
           "--max-time-per-kernel", str(budget), "--output-dir", out_dir]
    if noise is not None:
        cmd += ["--noise", str(noise)]
    if rounds:
        cmd += ["--rounds", str(rounds)]
    if threads:
        cmd += ["--threads", str(threads)]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(out_dir, "isolated.json")) as f:
        return json.load(f)


def coverage(results):
    total = sum(r["trace_total_us"] for r in results["results"])
    ok = sum(r["trace_total_us"] for r in results["results"] if r["status"] in ("ok", "included"))
    missing = [{"id": r["id"], "name": r["name"], "status": r["status"], "reason": r["reason"],
                "trace_total_us": r["trace_total_us"]}
               for r in results["results"] if r["status"] not in ("ok", "included")]
    return {"replayed_share": ok / total if total else 0.0, "signatures": len(results["results"]),
            "not_ok": missing}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--replay", default=os.path.join(ROOT, "target/release/replay"))
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--budget", type=float, default=0.5, help="--max-time-per-kernel")
    p.add_argument("--rounds", type=int, default=None, help="--rounds (default: replay's own)")
    p.add_argument("--noise", type=float, default=None,
                   help="--noise (default: replay's own; 0 spends the whole budget)")
    p.add_argument("--out", default=os.path.join(ROOT, "results/bench_isolated.json"))
    args = p.parse_args()
    report = {"threads": args.threads, "budget_s": args.budget, "rounds": args.rounds, "noise": args.noise, "coverage": {}, "noise": {}}
    with tempfile.TemporaryDirectory() as tmp:
        runs = {}
        for name in ("h100_bert_small_infer", "h100_vit_infer"):
            sigs = os.path.join(ROOT, "signatures", name + ".json")
            runs[name] = isolated(args.replay, sigs, os.path.join(tmp, name + "-1"), args.threads, args.budget, args.rounds, args.noise)
            report["coverage"][name] = coverage(runs[name])
        second = isolated(args.replay, os.path.join(ROOT, "signatures/h100_bert_small_infer.json"),
                          os.path.join(tmp, "bert-2"), args.threads, args.budget, args.rounds, args.noise)
    first = {r["id"]: r for r in runs["h100_bert_small_infer"]["results"] if r["stats"]}
    rows = []
    for r in second["results"]:
        a = first.get(r["id"])
        if not (a and r["stats"]):
            continue
        m1, m2 = a["stats"]["median_us"], r["stats"]["median_us"]
        if max(m1, m2) <= 50.0:
            continue
        rows.append({"id": r["id"], "name": r["name"][:80], "median_1_us": m1, "median_2_us": m2,
                     "diff_percent": 100.0 * abs(m2 - m1) / m1})
    report["noise"] = {"signatures_over_50us": len(rows),
                       "max_diff_percent": max((x["diff_percent"] for x in rows), default=0.0),
                       "within_2_percent": sum(x["diff_percent"] <= 2.0 for x in rows),
                       "rows": rows}
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(report, f, indent=2)
    for name, c in report["coverage"].items():
        print(f"coverage {name}: {100 * c['replayed_share']:.2f}% ({len(c['not_ok'])} signatures not ok)")
    n = report["noise"]
    print(f"noise: {n['within_2_percent']}/{n['signatures_over_50us']} signatures > 50 us within 2 %, "
          f"max difference {n['max_diff_percent']:.2f} %")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    sys.exit(main())
