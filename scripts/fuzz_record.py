#!/usr/bin/env python3
"""Appends one fuzz target's sitting to results/fuzz.json (scripts/fuzz.sh calls it).

The file holds every sitting (`sittings`, in order) and each target's totals over all of them
(`targets`): executions, seconds, CPU seconds, and the crashes, hangs, out-of-memory runs and
differential mismatches found. The figures come from libFuzzer's final statistics
(-print_final_stats=1) and the artifacts the sitting wrote.
"""
import argparse
import datetime
import json
import os
import platform
import re
import sys


def parse_times(line):
    """User + system seconds from a line of bash's `times` (`0m1.5s 0m0.25s`)."""
    total = 0.0
    for minutes, seconds in re.findall(r"(\d+)m([\d.]+)s", line):
        total += int(minutes) * 60 + float(seconds)
    return total


def final_stats(log_text):
    """libFuzzer's `stat::name: value` lines."""
    return {m.group(1): int(m.group(2))
            for m in re.finditer(r"^stat::(\w+):\s+(\d+)", log_text, re.MULTILINE)}


def classify(artifact, log_text):
    """What an artifact records: a hang, running out of memory, a mismatch or a crash."""
    if artifact.startswith("timeout-") or artifact.startswith("slow-unit-"):
        return "hangs"
    if artifact.startswith("oom-") or "out-of-memory" in log_text:
        return "ooms"
    if "mismatch:" in log_text:
        return "mismatches"
    return "crashes"


def record(results_path, target, log_text, start, end, cpu_seconds, status, corpus, artifacts):
    stats = final_stats(log_text)
    findings = {"crashes": 0, "hangs": 0, "ooms": 0, "mismatches": 0}
    for artifact in artifacts:
        findings[classify(artifact, log_text)] += 1
    files = [os.path.join(corpus, f) for f in os.listdir(corpus)] if os.path.isdir(corpus) else []
    sitting = {
        "target": target,
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "host": platform.node(),
        "cpus": os.cpu_count(),
        "seconds": round(end - start, 1),
        "cpu_seconds": round(cpu_seconds, 1),
        "executions": stats.get("number_of_executed_units", 0),
        "exec_per_second": stats.get("average_exec_per_sec", 0),
        "peak_rss_mb": stats.get("peak_rss_mb", 0),
        "exit_status": status,
        "corpus_files": len(files),
        "corpus_bytes": sum(os.path.getsize(f) for f in files),
        **findings,
        "artifacts": list(artifacts),
    }
    try:
        with open(results_path) as f:
            results = json.load(f)
    except FileNotFoundError:
        results = {}
    results.setdefault("sittings", []).append(sitting)
    totals = results.setdefault("targets", {}).setdefault(target, {})
    for key in ["seconds", "cpu_seconds", "executions", *findings]:
        totals[key] = round((totals.get(key) or 0) + (sitting[key] or 0), 1)
    totals["sittings"] = totals.get("sittings", 0) + 1
    totals["last"] = sitting["date"]
    tmp = results_path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(results, f, indent=1)
        f.write("\n")
    os.replace(tmp, results_path)
    return sitting


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", required=True)
    parser.add_argument("--target", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--start", type=float, required=True)
    parser.add_argument("--end", type=float, required=True)
    parser.add_argument("--times-before", default="")
    parser.add_argument("--times-after", default="")
    parser.add_argument("--status", type=int, default=0)
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--artifacts", nargs="*", default=[])
    args = parser.parse_args(argv)
    with open(args.log, errors="replace") as f:
        log_text = f.read()
    cpu = parse_times(args.times_after) - parse_times(args.times_before)
    sitting = record(args.results, args.target, log_text, args.start, args.end, cpu,
                     args.status, args.corpus, args.artifacts)
    print(f"   {args.target}: {sitting['executions']} executions in {sitting['seconds']} s "
          f"({sitting['cpu_seconds']} CPU s), corpus {sitting['corpus_files']} files; "
          f"crashes {sitting['crashes']}, hangs {sitting['hangs']}, ooms {sitting['ooms']}, "
          f"mismatches {sitting['mismatches']}")


if __name__ == "__main__":
    sys.exit(main())
