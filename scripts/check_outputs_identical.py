#!/usr/bin/env python3
"""Are two builds of replay the same to their users? Runs the same commands with both binaries
and compares what they write, byte for byte where the output is deterministic, and with every
measured figure (timings, rates, errors that follow from timings) masked where it is not.

  scripts/check_outputs_identical.py --old OLD/replay --new NEW/replay [--traces DIR] [--keep DIR]

Deterministic, compared byte for byte, on every trace of ../shared/traces/kineto:
  classify --json, predict --json, predict --what-if tier2*0.5 --what-if launch=0 --json,
  predict --perfetto FILE, and classify's signature file.
Measured, compared with figures masked (keys and structure, statuses, ids, names, counts):
  isolated of the two H100 signature files (--max-time-per-kernel 0.005 --rounds 1 on the cpu),
  selftest --device cpu --json, bench scan on a 2-case grid (its CSV's non-timing columns),
  the same grid in two shards and `replay merge` of them, bench mhc --quick, bench quant on a
  two-recipe config, calibrate --quick of the CPU's memory (its profile).
Ends with `N identical, M different`, each difference named with the first line that differs;
exit status 1 when anything differs. Use it before and after a refactor (issue 28).
"""
import argparse
import csv
import difflib
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Keys whose values are measurements (or follow from them), masked before comparing.
MEASURED = re.compile(
    r"(_us$|_ms$|_ns$|_s$|seconds|time|duration|samples|stats|gflops|gbps|bandwidth|joules|watts|"
    r"error|percent|predicted|measured|ratio|share|spread|iqr|median|mean|^min|^max|p10|p90|"
    r"calls|batch|rounds|noise|stable|speedup|throughput|host|started|date|version|elapsed|"
    r"threads|rss|memory|peak|detail)", re.I)


def mask(value, key=""):
    if isinstance(value, dict):
        return {k: ("<measured>" if MEASURED.search(k) else mask(v, k)) for k, v in value.items()}
    if isinstance(value, list):
        return [mask(v, key) for v in value]
    return value


def run(cmd, cwd):
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    return p.returncode, p.stdout, p.stderr


def first_difference(a, b):
    for line in difflib.unified_diff(a.splitlines(), b.splitlines(), lineterm="", n=0):
        if line.startswith(("+", "-")) and not line.startswith(("+++", "---")):
            return line[:200]
    return "(same lines, different bytes)"


def scrub_paths(text, work):
    return text.replace(work, "<work>")


def outputs(binary, work, traces):
    """name -> text, for every command above, run with `binary` in the folder `work`."""
    out = {}
    os.makedirs(work, exist_ok=True)
    for trace in traces:
        name = os.path.basename(trace).split(".")[0]
        rc, stdout, _ = run([binary, "classify", "--trace", trace, "--json",
                             "--out", os.path.join(work, name + ".sig.json")], work)
        out[f"classify --json {name}"] = f"exit {rc}\n{stdout}"
        sig = os.path.join(work, name + ".sig.json")
        out[f"classify signature file {name}"] = open(sig).read() if os.path.exists(sig) else "(none)"
        rc, stdout, _ = run([binary, "predict", "--trace", trace, "--json"], work)
        out[f"predict --json {name}"] = f"exit {rc}\n{stdout}"
        rc, stdout, _ = run([binary, "predict", "--trace", trace, "--what-if", "tier2*0.5",
                             "--what-if", "launch=0", "--json"], work)
        out[f"predict what-if {name}"] = f"exit {rc}\n{stdout}"
        perfetto = os.path.join(work, name + ".perfetto.json")
        rc, _, _ = run([binary, "predict", "--trace", trace, "--perfetto", perfetto], work)
        out[f"predict --perfetto {name}"] = f"exit {rc}\n" + (open(perfetto).read() if os.path.exists(perfetto) else "")
    for name in ("h100_bert_small_infer", "h100_vit_infer"):
        folder = os.path.join(work, "isolated-" + name)
        rc, _, _ = run([binary, "isolated", "--kernels", os.path.join(ROOT, "signatures", name + ".json"),
                        "--device", "cpu", "--quiet", "--max-time-per-kernel", "0.005", "--rounds", "1",
                        "--output-dir", folder], work)
        try:
            with open(os.path.join(folder, "isolated.json")) as f:
                value = mask(json.load(f))
        except (OSError, ValueError) as e:
            value = f"unreadable: {e}"
        out[f"isolated {name}"] = f"exit {rc}\n" + scrub_paths(json.dumps(value, indent=1, sort_keys=True), folder)
    rc, stdout, _ = run([binary, "selftest", "--device", "cpu", "--json"], work)
    try:
        selftest = json.dumps(mask(json.loads(stdout)), indent=1, sort_keys=True)
    except ValueError:
        selftest = stdout
    out["selftest --device cpu"] = f"exit {rc}\n{selftest}"
    scan = os.path.join(work, "scan")
    rc, _, _ = run([binary, "bench", "scan", "--device", "cpu", "--T", "16,32", "--K", "4", "--C", "3",
                    "--semirings", "Log,Max", "--max-time-per-case", "0.01", "--repeats", "1",
                    "--output-dir", scan, "--quiet"], work)
    try:
        with open(os.path.join(scan, "benchmark_full.csv"), newline="") as f:
            rows = [{k: ("<measured>" if MEASURED.search(k) else v) for k, v in r.items()}
                    for r in csv.DictReader(f)]
        out["bench scan rows"] = f"exit {rc}\n" + json.dumps(rows, indent=1)
    except OSError as e:
        out["bench scan rows"] = f"exit {rc}\nunreadable: {e}"
    # The same grid as two shards, and their merge (the suite driver's shard path).
    for i in (1, 2):
        rc, _, _ = run([binary, "bench", "scan", "--device", "cpu", "--T", "16,32", "--K", "4", "--C", "3",
                        "--semirings", "Log,Max", "--max-time-per-case", "0.01", "--repeats", "1",
                        "--output-dir", os.path.join(work, f"shard-{i}"), "--quiet", "--shard", f"{i}/2"], work)
        out[f"bench scan shard {i}/2 exit"] = f"exit {rc}"
    rc, _, _ = run([binary, "merge", os.path.join(work, "shard-1"), os.path.join(work, "shard-2"),
                    "--out", os.path.join(work, "merged")], work)
    out["merge bench scan rows"] = f"exit {rc}\n" + masked_csv(os.path.join(work, "merged", "benchmark_full.csv"))
    mhc = os.path.join(work, "mhc")
    rc, _, _ = run([binary, "bench", "mhc", "--quick", "--warmup", "0", "--iters", "1",
                    "--output-dir", mhc], work)
    out["bench mhc rows"] = f"exit {rc}\n" + masked_csv(os.path.join(mhc, "benchmark_results.csv"))
    quant = os.path.join(work, "quant")
    config = os.path.join(work, "quant.yml")
    with open(config, "w") as f:
        f.write("benchmark_mode: inference\nquantization_config_recipe_names: [int8wo, int4wo-32]\n"
                f"output_dir: {quant}\nmodel_params:\n"
                "  - matrix_shapes: [{name: custom, shapes: [[16, 64, 32]]}]\n"
                "    high_precision_dtype: torch.bfloat16\n    device: cpu\n    model_type: linear\n")
    rc, _, _ = run([binary, "bench", "quant", "--config", config, "--runs", "2", "--quiet"], work)
    found = sorted(glob.glob(os.path.join(quant, "results_*.csv")))
    out["bench quant rows"] = f"exit {rc}\n" + (masked_csv(found[-1]) if found else "(none)")
    profile = os.path.join(work, "calibrate", "cpu.json")
    rc, _, _ = run([binary, "calibrate", "--device", "cpu", "--quick", "--operations", "memory",
                    "--output", profile, "--quiet"], work)
    try:
        with open(profile) as f:
            value = json.dumps(mask(json.load(f)), indent=1, sort_keys=True)
    except (OSError, ValueError) as e:
        value = f"unreadable: {e}"
    out["calibrate --quick memory profile"] = f"exit {rc}\n{value}"
    return {k: scrub_paths(v, work) for k, v in out.items()}


def masked_csv(path):
    """A CSV's rows as JSON with every measured column masked, or why it cannot be read."""
    try:
        with open(path, newline="") as f:
            rows = [{k: ("<measured>" if MEASURED.search(k or "") else v) for k, v in r.items()}
                    for r in csv.DictReader(f)]
        return json.dumps(rows, indent=1)
    except OSError as e:
        return f"unreadable: {e}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", required=True, help="the replay binary before the change")
    ap.add_argument("--new", required=True, help="the replay binary after the change")
    ap.add_argument("--traces", default=os.path.join(ROOT, "../shared/traces/kineto"))
    ap.add_argument("--keep", help="keep both runs' files here (default: a temporary folder)")
    args = ap.parse_args()
    traces = sorted(glob.glob(os.path.join(args.traces, "*.json.gz")))
    if not traces:
        print(f"check_outputs_identical: no *.json.gz in {args.traces}", file=sys.stderr)
        return 2
    for b in (args.old, args.new):
        if not os.access(b, os.X_OK):
            print(f"check_outputs_identical: {b} is not an executable", file=sys.stderr)
            return 2
    base = args.keep or tempfile.mkdtemp(prefix="replay-identical-")
    # The same folder name for both runs, so that paths written into outputs agree.
    old = outputs(os.path.abspath(args.old), os.path.join(base, "run"), traces)
    os.rename(os.path.join(base, "run"), os.path.join(base, "old"))
    new = outputs(os.path.abspath(args.new), os.path.join(base, "run"), traces)
    same = different = 0
    for key in old:
        if old[key] == new.get(key):
            same += 1
        else:
            different += 1
            print(f"DIFFERENT  {key}: {first_difference(old[key], new.get(key, ''))}")
    print(f"{same} identical, {different} different ({len(traces)} traces; files in {base})")
    return 1 if different else 0


if __name__ == "__main__":
    sys.exit(main())
