#!/usr/bin/env python3
"""Kill-and-resume across the five grid commands (issue 34's goal: 100 random kills, 100
complete, identical results).

  .venv/bin/python scripts/kill_resume.py [--kills N] [--quick] [--seed S] [--out FILE]

For each command on a small grid: one uninterrupted run, then N runs each killed with SIGKILL
once its row file (or journal) holds a random number of rows, resumed with --resume to the end,
and compared with the uninterrupted run on what does not depend on timing (ids, statuses,
methods, shapes; the times themselves are measurements). Each kill also checks that the rows
the killed run had written are still there byte for byte after the resume.

Writes results/kill_resume.json (or --out): per command the kills, how many completed, how
many were identical, and the rows each kill happened at. --quick: one kill each of isolated
and bench scan (what scripts/test_scripts.py runs).
"""
import argparse
import csv
import io
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
REPLAY = os.environ.get("REPLAY_BIN", os.path.join(ROOT, "target/release/replay"))
BLOOM_TINY_TRACE = os.path.join(ROOT, "crates/core/tests/data/et/bloom_tiny_cpu.json.gz")

QUANT_YAML = """benchmark_mode: inference
quantization_config_recipe_names: [int8wo, int8dq]
output_dir: {out}
model_params:
  - matrix_shapes: [{{name: custom, shapes: [[16, 64, 32], [32, 64, 64], [16, 32, 64]]}}]
    high_precision_dtype: torch.float32
    device: cpu
    model_type: linear
"""


def lines(path):
    try:
        with open(path, "rb") as f:
            return f.read().count(b"\n")
    except FileNotFoundError:
        return 0


def newest(folder, prefix):
    try:
        names = sorted(n for n in os.listdir(folder) if n.startswith(prefix) and n.endswith(".csv"))
    except FileNotFoundError:
        return None
    return os.path.join(folder, names[-1]) if names else None


def timing_free_csv(path):
    """The CSV's rows without the columns that are measurements."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    # Measurements, and the run's own folder (each run writes into another).
    timed = ("time", "speedup", "peak", "gb/s", "gflops", "ms", "us", "sqnr", "bandwidth",
             "output_dir", "path")
    keep = [i for i, h in enumerate(header) if not any(t in h.lower() for t in timed)]
    return [[r[i] for i in keep] for r in body]


def isolated_rows(folder):
    with open(os.path.join(folder, "isolated.json")) as f:
        data = json.load(f)
    rows = [[r["id"], r["status"], r.get("method"), r.get("reason"), r["replayed_as"]]
            for r in data["results"]]
    return data["complete"], rows


def calibrate_rows(folder):
    with open(os.path.join(folder, "profile.json")) as f:
        data = json.load(f)
    return True, [sorted(data.get("operation_profiles", {})), sorted(data.get("failures", {})),
                  sorted(data.get("fusion_profiles", {}))]


class Command:
    """One grid command: how to run it into a folder, where its rows grow, how to compare."""

    def __init__(self, name, argv, rows_file, rows_of, items, header=True):
        self.name, self.argv, self.rows_file, self.rows_of = name, argv, rows_file, rows_of
        # Work items in the grid (a work item may write several rows), and whether the rows
        # file starts with a header line.
        self.items, self.header = items, header
        self.total = self.group = None  # lines of a whole run, rows per work item

    def args(self, folder, extra=()):
        if self.name == "bench quant":
            # Its grid is a YAML config, one per run folder (it names the folder too).
            with open(folder + ".yml", "w") as f:
                f.write(QUANT_YAML.format(out=folder))
        return [REPLAY, *[a.format(out=folder, config=folder + ".yml") for a in self.argv], *extra]


def commands(work):
    sigs = os.path.join(work, "bloom_tiny.json")
    subprocess.run([REPLAY, "classify", "--trace", BLOOM_TINY_TRACE, "--out", sigs],
                   check=True, capture_output=True)
    scan = ["bench", "scan", "--T", "8,16", "--K", "3,4", "--C", "1,2", "--B", "2",
            "--backends", "CPU", "--phases", "forward,Both", "--semirings", "log,MAX",
            "--repeats", "3", "--max-time-per-case", "0.02", "-q", "--output-dir", "{out}"]
    return [
        Command("isolated",
                ["isolated", "--device", "cpu", "--max-time", "0.01", "--rounds", "2", "--quiet",
                 "--kernels", sigs, "--output-dir", "{out}"],
                lambda d: os.path.join(d, "isolated.journal.jsonl"), isolated_rows, 86, header=False),
        Command("bench scan", scan, lambda d: os.path.join(d, "benchmark_full.csv"),
                lambda d: (True, timing_free_csv(os.path.join(d, "benchmark_full.csv"))), 32),
        Command("bench quant",
                ["bench", "quant", "--config", "{config}",
                 "--runs", "3", "--quiet", "--output-dir", "{out}"],
                lambda d: newest(d, "results_"),
                lambda d: (True, timing_free_csv(newest(d, "results_"))), 9),
        Command("bench mhc",
                ["bench", "mhc", "--sweep-bs", "--seq", "32", "--dim", "64", "--dtype", "float32",
                 "--warmup", "1", "--iters", "2", "--quiet", "--output-dir", "{out}"],
                lambda d: os.path.join(d, "benchmark_results.csv"),
                lambda d: (True, timing_free_csv(os.path.join(d, "benchmark_results.csv"))), 6),
        Command("calibrate",
                ["calibrate", "--device", "cpu", "--quick", "--operations", "matmul",
                 "--peak-gflops", "1000", "--quiet", "--output", "{out}/profile.json"],
                lambda d: os.path.join(d, "profile.json.journal.jsonl"), calibrate_rows, None, header=False),
    ]


def one_kill(cmd, folder, expected, rng):
    """Starts `cmd`, kills it at a random row, resumes it, compares. Returns a record."""
    rows_at = 1 + rng.randrange(max(1, cmd.total - 2))
    args = cmd.args(folder)
    child = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 300
    while time.time() < deadline and child.poll() is None:
        path = cmd.rows_file(folder)
        if path and lines(path) >= rows_at:
            break
        time.sleep(0.005)
    finished_first = child.poll() is not None
    if not finished_first:
        child.send_signal(signal.SIGKILL)
    child.wait()
    path = cmd.rows_file(folder)
    before = open(path, "rb").read() if path and os.path.exists(path) else b""
    killed_at = before.count(b"\n")
    # What must survive: the whole work items (a work item of several rows cut short is
    # redone, its rows so far cut off), every line up to the last of them.
    keep = int(cmd.header) + (killed_at - int(cmd.header)) // cmd.group * cmd.group
    before = b"".join(before.splitlines(keepends=True)[:max(0, keep)])
    p = subprocess.run(cmd.args(folder, ["--resume"]), capture_output=True, text=True, timeout=600)
    record = {"rows_at_kill": killed_at, "ended_before_the_kill": finished_first,
              "resume_exit": p.returncode}
    if p.returncode != 0:
        record.update(complete=False, identical=False, error=p.stderr[-2000:])
        return record
    after = open(cmd.rows_file(folder), "rb").read()
    complete, rows = cmd.rows_of(folder)
    record.update(complete=bool(complete), identical=rows == expected,
                  rows_kept_byte_for_byte=after[:len(before)] == before)
    return record


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=20, help="kills per command (default 20: 100 in all)")
    parser.add_argument("--quick", action="store_true", help="one kill of isolated and of bench scan")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--out", default=os.path.join(ROOT, "results/kill_resume.json"))
    parser.add_argument("--only", default=None, help="comma-separated command names")
    a = parser.parse_args(argv)
    if a.kills < 1:
        parser.error(f"--kills: '{a.kills}' is not a whole number of at least 1")
    if not os.path.exists(REPLAY):
        print(f"error: {REPLAY} is not built (make build)", file=sys.stderr)
        return 2
    seed = a.seed if a.seed is not None else int(time.time())
    rng = random.Random(seed)
    work = tempfile.mkdtemp(prefix="replay-kill-resume-")
    chosen = commands(work)
    if a.quick:
        chosen = [c for c in chosen if c.name in ("isolated", "bench scan")]
        a.kills = 1
    if a.only:
        names = a.only.split(",")
        chosen = [c for c in chosen if c.name in names]
    report = {"seed": seed, "kills_per_command": a.kills, "commands": {}}
    started = time.time()
    for cmd in chosen:
        whole = os.path.join(work, cmd.name.replace(" ", "_") + "-whole")
        p = subprocess.run(cmd.args(whole), capture_output=True, text=True, timeout=600)
        if p.returncode != 0:
            report["commands"][cmd.name] = {"error": f"the uninterrupted run failed: {p.stderr[-2000:]}"}
            print(f"{cmd.name}: the uninterrupted run failed:\n{p.stderr}", file=sys.stderr)
            continue
        _, expected = cmd.rows_of(whole)
        cmd.total = lines(cmd.rows_file(whole))
        rows = cmd.total - int(cmd.header)
        cmd.group = max(1, rows // cmd.items) if cmd.items else 1
        kills = []
        for k in range(a.kills):
            folder = os.path.join(work, f"{cmd.name.replace(' ', '_')}-{k}")
            kills.append(one_kill(cmd, folder, expected, rng))
        entry = {
            "kills": len(kills),
            "complete": sum(k["complete"] for k in kills),
            "identical": sum(k["identical"] for k in kills),
            "rows_kept_byte_for_byte": sum(bool(k.get("rows_kept_byte_for_byte")) for k in kills),
            "runs": kills,
        }
        report["commands"][cmd.name] = entry
        print(f"{cmd.name:12s} {entry['kills']} kills: {entry['complete']} complete, "
              f"{entry['identical']} identical, {entry['rows_kept_byte_for_byte']} kept their rows")
    total = sum(e.get("kills", 0) for e in report["commands"].values())
    good = sum(e.get("identical", 0) for e in report["commands"].values())
    report.update(total_kills=total, total_identical=good, seconds=round(time.time() - started, 1))
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w") as f:
        json.dump(report, f, indent=2)
    print(f"{good} of {total} killed runs resumed to identical results ({a.out}, seed {seed})")
    return 0 if good == total and all("error" not in e for e in report["commands"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
