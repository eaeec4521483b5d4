#!/usr/bin/env python3
"""`make bench-gpu-truth`: every prediction of every GPU-truth configuration side by side.

For each configuration folder of ../shared/gpu-truth/<machine>/ (and of results/gpu/ loans that
kept one), offline on this CPU:
- `host model`: `replay predict --isolated --host-times model` with the host section of the
  machine kind's profile (profiles/h200_sxm_datasheet.json, fitted on at most three named
  configurations by scripts/fit_host_profile.py; each op's own host time from the folder's
  isolated.json);
- `corrected`: the same with the trace's host time less the profiler's cost per op;
- `trace`: the trace's host time as recorded (profiler included);
- beside them what `replay compare` predicted in the run that recorded the folder (kernel sum,
  timeline, sequence) and the unprofiled truth measured in that run (median, p10-p90).

Writes results/bench_gpu_truth.json and the table as Markdown (docs/benchmarks/gpu-truth.md),
and prints the table. The goals (issue 50): the host model within 10 % of the truth's median
on at least 7 of 8 configurations and within 5 % on at least 5.

    scripts/bench_gpu_truth.py [--truth DIR] [--profile P] [--json OUT] [--markdown OUT]
"""

import argparse
import datetime
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_truth  # noqa: E402

MODES = ["model", "corrected", "trace"]


def row(folder, profile):
    t = gpu_truth.truth(folder)
    out = {"truth": t, "predictions": {}, "earlier": gpu_truth.earlier_predictions(folder)}
    for mode in MODES:
        try:
            p = gpu_truth.predict(folder, mode, profile if mode == "model" else None)
        except RuntimeError as e:
            out["predictions"][mode] = {"error": str(e)}
            continue
        out["predictions"][mode] = {
            "predicted_us": p["predicted_us"],
            "error_percent": gpu_truth.error_percent(p["predicted_us"], t["median_us"]),
            "inside_p10_p90": t["p10_us"] <= p["predicted_us"] <= t["p90_us"],
            # Within the range the truth's own fifths moved over (its regimes in that run).
            "inside_fifths": bool(t["fifths_us"]) and min(t["fifths_us"]) <= p["predicted_us"] <= max(t["fifths_us"]),
            "host_us": p["host_us"],
            "device_us": p["device_us"],
            "bound": p["bound"],
            "host_model": p["host"]["host_model"],
            "notes": p["host"]["notes"],
        }
    return out


def markdown(rows, profile, fitted_on):
    lines = [
        "| configuration | truth median (p10-p90) µs | truth's fifths in run order µs | host model | corrected | trace | earlier sum | earlier timeline | earlier sequence | bound (host / device µs) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, r in rows.items():
        t = r["truth"]

        def cell(mode):
            p = r["predictions"].get(mode, {})
            if "predicted_us" not in p:
                return "error"
            mark = " ✓" if abs(p["error_percent"]) < 10 else ""
            return f"{p['predicted_us']:.0f} ({p['error_percent']:+.1f} %){mark}"

        def earlier(kind):
            v = r["earlier"].get(kind)
            return f"{v:.0f} ({gpu_truth.error_percent(v, t['median_us']):+.1f} %)" if v else "-"

        m = r["predictions"].get("model", {})
        bound = f"{m.get('bound', '-')} ({m.get('host_us', 0):.0f} / {m.get('device_us', 0):.0f})"
        fit = " (fit)" if name in fitted_on else ""
        lines.append(
            f"| {name}{fit} | {t['median_us']:.0f} ({t['p10_us']:.0f}-{t['p90_us']:.0f}) | "
            f"{' '.join(f'{v:.0f}' for v in t['fifths_us']) or '-'} | {cell('model')} | "
            f"{cell('corrected')} | {cell('trace')} | {earlier('sum')} | {earlier('timeline')} | {earlier('sequence')} | {bound} |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--truth", default=gpu_truth.DEFAULT_TRUTH)
    parser.add_argument("--profile", default=os.path.join(gpu_truth.REPO, "profiles", "h200_sxm_datasheet.json"))
    parser.add_argument("--json", default=os.path.join(gpu_truth.REPO, "results", "bench_gpu_truth.json"))
    parser.add_argument("--markdown", default=os.path.join(gpu_truth.REPO, "docs", "benchmarks", "gpu-truth.md"))
    args = parser.parse_args()

    with open(args.profile) as f:
        host = json.load(f).get("host")
    if not host:
        sys.exit(f"bench_gpu_truth: {args.profile} has no host section (scripts/fit_host_profile.py writes one)")
    fitted_on = [n for n in host.get("notes", {})]
    rows = {}
    names = gpu_truth.configurations(args.truth)
    for i, name in enumerate(names):
        print(f"[{i + 1}/{len(names)}] {name}", file=sys.stderr)
        rows[name] = row(os.path.join(args.truth, name), args.profile)

    def count(limit, mode="model"):
        return sum(1 for r in rows.values()
                   if "error_percent" in r["predictions"].get(mode, {})
                   and abs(r["predictions"][mode]["error_percent"]) < limit)

    goals = {
        "within_10_percent": count(10), "within_5_percent": count(5), "configurations": len(rows),
        "goal_10_percent_met": count(10) >= 7, "goal_5_percent_met": count(5) >= 5,
        "inside_p10_p90": sum(1 for r in rows.values() if r["predictions"].get("model", {}).get("inside_p10_p90")),
        "inside_fifths": sum(1 for r in rows.values() if r["predictions"].get("model", {}).get("inside_fifths")),
        "truth_moved_over_20_percent": sorted(
            n for n, r in rows.items() if r["truth"]["fifths_us"]
            and max(r["truth"]["fifths_us"]) > 1.2 * min(r["truth"]["fifths_us"])),
        "corrected_within_10_percent": count(10, "corrected"), "trace_within_10_percent": count(10, "trace"),
    }
    report = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "truth": os.path.relpath(args.truth, gpu_truth.REPO),
        "profile": os.path.relpath(args.profile, gpu_truth.REPO),
        "host_section": host,
        "goals": goals,
        "configurations": rows,
    }
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(report, f, indent=2)
        f.write("\n")
    table = markdown(rows, args.profile, fitted_on)
    os.makedirs(os.path.dirname(args.markdown), exist_ok=True)
    with open(args.markdown, "w") as f:
        f.write("# GPU truth: every prediction side by side (`make bench-gpu-truth`)\n\n")
        f.write(f"Written by `scripts/bench_gpu_truth.py` on {report['date']}, offline on the CPU, from "
                f"`{report['truth']}` with the host section of `{report['profile']}`:\n\n")
        f.write(f"> {host.get('source', '')}\n\n")
        f.write(f"dispatch {host.get('dispatch_us_per_op')} µs per op event, interpreter "
                f"{host.get('interpreter_us_per_op')} µs per top-level op, launch {host.get('launch_us')} µs "
                "(launches the replay did not measure). (fit) marks the configurations it was fitted on; "
                "✓ within 10 % of the truth's median.\n\n")
        f.write(table + "\n\n")
        f.write(f"Host model: {goals['within_10_percent']} of {goals['configurations']} within 10 % "
                f"(goal 7), {goals['within_5_percent']} within 5 % (goal 5), {goals['inside_p10_p90']} inside "
                f"the truth's p10-p90. Corrected: {goals['corrected_within_10_percent']} within 10 %; "
                f"trace: {goals['trace_within_10_percent']}.\n\n")
        moved = goals["truth_moved_over_20_percent"]
        f.write(f"The truth's fifths: the median of each fifth of its samples in the order they ran. In "
                f"{len(moved)} of {goals['configurations']} configurations ({', '.join(moved) or 'none'}) the "
                "machine changed speed within the truth's own run by more than 20 % (the fastest fifth against "
                "the slowest), so its median depends on when the switch came; the host model lies within the "
                f"range of the fifths in {goals['inside_fifths']} of {goals['configurations']}.\n")
    print(table)
    print(json.dumps(goals, indent=2))


if __name__ == "__main__":
    main()
