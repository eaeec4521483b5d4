#!/usr/bin/env python3
"""`make bench-huge`: issue 33's traces the size of real training jobs, measured.

  .venv/bin/python scripts/bench_huge.py [--sizes 1G,2G,...] [--quick] [--out FILE]

Inputs come from replay-tracegen (crates/tracegen: synthetic Kineto training steps, fresh ids
throughout); nothing generated is written into the repository: it is piped, or written under
target/bench/huge/ and deleted after its run.

1. Streaming, for each size (1, 2, 4, 8, 16, 30 GB; --sizes): `replay-tracegen --size S --out -
   | replay classify --trace - --memory-budget 1G --out ...` (the streamed classify; --memory-budget), when `replay` reads a trace from standard input
   (tried on a one-step trace first; "unsupported" with replay's answer otherwise). Without
   it, the same sizes are run on files (generated first, untimed): what replay does today.
   Each size is run --repeats times (5): wall time, GB/s of JSON and peak RSS of replay
   (os.wait4's ru_maxrss) of the median run, the median peak and every run's, and whether
   the median peak stays within 10 % from the smallest size to the largest (a single run's
   peak moves by several per cent with the timing of the allocator's frees).
2. The in-memory path (`--trace FILE --memory-budget 1T`, a file on disk) on the largest size whose estimated
   peak fits the memory cap (estimated from the smaller sizes' peak per byte).
3. 8 ranks x 1 GB, gzipped (--ranks, --rank-size): one `classify` call over all the files when
   replay takes several traces (tried first; "unsupported" with the reason otherwise), the
   aggregate GB/s of JSON, with replay's own choice of path (no --memory-budget: ranks this
   large stream) and held in memory (--memory-budget 1T), side by side; and, for reference,
   the ranks classified one command each (in memory).
4. Under a smaller budget (--budgets, 64M to 1G): the smallest size piped through `classify
   --memory-budget B`, B from the list: peak RSS against B (the streamed pass reads blocks of
   B/64, 1 MiB to 8 MiB, and says a budget under ~96 MB cannot be met), the same signatures.
5. --predict: `replay predict` at each size, streamed (`replay-tracegen ... --out - | replay
   predict --trace - --memory-budget B --json`: one step at a time, predict/stream), and in
   memory on the smallest size's file; whether both printed the same prediction.
6. HolisticTraceAnalysis 0.5 (throw-away venv, installed as scripts/bench_python.py does, whose
   code this uses) on generated files of rising size (--hta-sizes) until it no longer fits:
   each run under an RSS watchdog (scripts/measured_run.py) that kills it past the memory cap,
   so it never takes the machine down. Says where it stops and why: killed at the cap, timed
   out, or not run because its load time extrapolated from the two sizes before it (HTA's time
   grows about quadratically with the file here) is over --hta-timeout.

Every run is capped (--rss-cap; default 60 % of the memory available at the start) and its
result appended to the report (results/bench_huge.json; --out) as soon as it is done. GB =
10^9 bytes of uncompressed JSON. The machine's load is recorded: on a shared machine the
timings are rough. --quick runs MB sizes, no HTA: the self-test's few seconds.
"""
import argparse
import datetime
import json
import math
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import bench_python  # noqa: E402  (HTA's venv and load snippet: one copy of that code)
import measured_run  # noqa: E402

REPO = HERE.parent
TARGET = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
DEFAULT_SIZES = "1G,2G,4G,8G,16G,30G"
DEFAULT_BUDGETS = "64M,128M,256M,1G"
# replay says a budget under this cannot be met on a large trace (fold/budget.rs STREAMED_FLOOR_BYTES).
BUDGET_FLOOR = 96 << 20
QUICK_SIZES = "4M,8M,16M"
DEFAULT_HTA_SIZES = "100M,250M,500M,1G,2G,4G"
GB = 1e9
UNITS = {"": 1, "B": 1, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}


def parse_size(text):
    m = re.fullmatch(r"\s*([0-9.]+)\s*([KMGT]?)B?\s*", text.upper())
    if not m:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 30G, 500M)")
    return int(float(m.group(1)) * UNITS[m.group(2)])


def sizes(text):
    return [parse_size(s) for s in text.split(",") if s.strip()]


def label(n):
    for unit, scale in (("G", 1e9), ("M", 1e6), ("K", 1e3)):
        if n >= scale:
            return f"{n / scale:g}{unit}"
    return str(n)


def meminfo():
    out = {}
    with open("/proc/meminfo") as f:
        for line in f:
            key, value = line.split(":")
            out[key] = int(value.split()[0]) * 1024
    return out


class Report:
    """The report, rewritten whole (atomically) after every measurement."""

    def __init__(self, path, data):
        self.path, self.data = pathlib.Path(path), data
        self.save()

    def save(self):
        self.data["machine"]["load_average_now"] = list(os.getloadavg())
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".json.partial")
        tmp.write_text(json.dumps(self.data, indent=1) + "\n")
        os.replace(tmp, self.path)


class Bench:
    def __init__(self, args):
        self.args = args
        self.replay = pathlib.Path(args.replay)
        self.tracegen = pathlib.Path(args.tracegen)
        self.work = pathlib.Path(args.work_dir)
        self.cap = args.rss_cap
        self.hta_cap = args.hta_cap or args.rss_cap
        self.peak_per_byte = None  # replay's in-memory peak RSS per JSON byte, once measured

    # --- the pieces --------------------------------------------------------------------
    def gen_cmd(self, size, *extra):
        return [self.tracegen, "--size", str(size), "--seed", str(self.args.seed),
                "--layout", self.args.layout, *extra]

    def generate(self, path, size, *extra):
        """A trace file (untimed input); returns (json_bytes, steps)."""
        done = subprocess.run([*map(str, self.gen_cmd(size, *extra)), "--out", str(path)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"bench_huge: replay-tracegen failed: {done.stderr}")
        return generated(done.stderr)

    def classify(self, traces, out, budget="1T", **kw):
        # In memory (1T), whatever the size; budget=None: replay's own choice (no --memory-budget).
        cmd = [self.replay, "classify", *(["--memory-budget", budget] if budget else [])]
        for t in traces:
            cmd += ["--trace", t]
        return measured_run.run([*cmd, "--out", out], cap=self.cap, **kw)

    def try_stdin(self):
        """Does `replay classify --trace -` read standard input? (supported, reason)."""
        out = self.work / "probe_stdin.sig.json"
        r = measured_run.run_pipeline([self.tracegen, "--steps", "1", "--quiet", "--out", "-"],
                                      [self.replay, "classify", "--trace", "-", "--out", out],
                                      cap=self.cap, timeout=120)
        if r["rc"] == 0 and out.exists():
            return True, "replay classify --trace - read a one-step trace from a pipe"
        return False, f"replay classify --trace - exited {r['rc']}: {last_line(r['stderr_tail'])}"

    def try_several(self):
        """Does one classify call take several traces? (form of the call or None, reason)."""
        a, b = self.work / "probe_rank0.json.gz", self.work / "probe_rank1.json.gz"
        for rank, path in enumerate((a, b)):
            subprocess.run([str(self.tracegen), "--steps", "1", "--ranks", "2", "--rank", str(rank),
                            "--gzip", "--quiet", "--out", str(path)], check=True)
        out = self.work / "probe_ranks.sig.json"
        reasons = []
        try:
            for form, extra in (("--trace A --trace B", ["--trace", a, "--trace", b]),
                                ("--trace A B", ["--trace", a, b])):
                r = measured_run.run([self.replay, "classify", *extra, "--out", out], cap=self.cap,
                                     timeout=120)
                if r["rc"] == 0:
                    return form, f"replay classify {form} classified two rank files in one call"
                reasons.append(f"{form}: exit {r['rc']}: {last_line(r['stderr_tail'])}")
            return None, "; ".join(reasons)
        finally:
            a.unlink(missing_ok=True)
            b.unlink(missing_ok=True)

    def row(self, r, json_bytes, steps, mode, sig_path):
        out = {
            "mode": mode,
            "json_bytes": json_bytes,
            "steps": steps,
            "rc": r["rc"],
            "wall_s": r["wall_s"],
            "gb_per_s": json_bytes / GB / r["wall_s"] if r["rc"] == 0 else None,
            "cpu_s": r["user_s"] + r["sys_s"],
            "peak_rss_bytes": r["peak_rss_bytes"],
            "peak_over_json": r["peak_rss_bytes"] / json_bytes,
            "killed_by_cap": r["killed_by_cap"],
            "timed_out": r["timed_out"],
        }
        if r["rc"] != 0:
            out["error"] = last_line(r["stderr_tail"])
        elif sig_path.exists():
            sig = json.loads(sig_path.read_text())
            out["signatures"] = len(sig["signatures"])
            out["invocations"] = sig["summary"]["total"]["invocations"]
            out["signature_ids"] = sorted(s["id"] for s in sig["signatures"])
        if "producer" in r:
            p = r["producer"]
            out["generator_cpu_s"] = p["user_s"] + p["sys_s"]
        return out

    def fits(self, json_bytes):
        """(fits, estimated peak) for the in-memory path on a file of this size."""
        if self.peak_per_byte is None:
            return True, None
        estimate = self.peak_per_byte * json_bytes
        return estimate <= self.cap, estimate

    def disk_ok(self, json_bytes):
        return shutil.disk_usage(self.work).free > json_bytes + 2e9

    # --- the parts of the report ---------------------------------------------------------
    def file_run(self, size, tag):
        """Generate a file of `size`, classify it (the in-memory path), delete it."""
        fits, estimate = self.fits(size)
        if not fits:
            return {"mode": "file", "json_bytes": size, "skipped":
                    f"would not fit the {self.cap / GB:.1f} GB cap: estimated peak "
                    f"{estimate / GB:.1f} GB at {self.peak_per_byte:.2f}x the JSON"}
        if not self.disk_ok(size):
            return {"mode": "file", "json_bytes": size, "skipped": "not enough free disk"}
        path = self.work / f"{tag}_{label(size)}.json"
        sig = self.work / f"{tag}_{label(size)}.sig.json"
        try:
            start = time.perf_counter()
            json_bytes, steps = self.generate(path, size)
            generate_s = time.perf_counter() - start
            r = self.classify([path], sig)
        finally:
            path.unlink(missing_ok=True)
        row = self.row(r, json_bytes, steps, "file", sig)
        row["generate_to_file_s"] = generate_s
        row["generate_to_file_gb_per_s"] = json_bytes / GB / generate_s
        if r["rc"] == 0:
            ratio = r["peak_rss_bytes"] / json_bytes
            self.peak_per_byte = max(self.peak_per_byte or 0, ratio)
        return row

    def pipe_run(self, size):
        sig = self.work / f"pipe_{label(size)}.sig.json"
        r = measured_run.run_pipeline([*self.gen_cmd(size), "--out", "-"],
                                      [self.replay, "classify", "--trace", "-", "--out", sig,
                                       "--memory-budget", self.args.memory_budget],
                                      cap=self.cap)
        json_bytes, steps = generated(r["producer"]["stderr_tail"])
        return self.row(r, json_bytes, steps, "pipe", sig)

    def floor_run(self, size):
        """The generator piped into SHA-256 alone (what replay needs for the signature file's
        `source.sha256`; hashlib is OpenSSL's, which uses the CPU's SHA instructions), read as
        replay reads a pipe, 8 MiB at a time: the most any reader of this pipe that hashes it
        could reach on this machine, parsing nothing."""
        r = measured_run.run_pipeline([*self.gen_cmd(size), "--out", "-"],
                                      [sys.executable, "-c", FLOOR_CONSUMER], cap=self.cap)
        json_bytes, _ = generated(r["producer"]["stderr_tail"])
        p = r["producer"]
        return {"json_bytes": json_bytes, "rc": r["rc"], "wall_s": r["wall_s"],
                "gb_per_s": json_bytes / GB / r["wall_s"] if r["rc"] == 0 else None,
                "cpu_s": r["user_s"] + r["sys_s"], "generator_cpu_s": p["user_s"] + p["sys_s"]}

    def budgets(self, report):
        """The smallest size piped under each of --budgets: the peak against the budget."""
        size = self.args.sizes[0]
        part = {"what": f"replay-tracegen --size {label(size)} --out - | replay classify --trace - "
                        "--memory-budget B (median of --repeats runs each)",
                "floor_bytes": BUDGET_FLOOR, "rows": []}
        report.data["budgets"] = part
        ids = None
        for budget in self.args.budgets:
            runs = []
            for _ in range(self.args.repeats):
                sig = self.work / f"budget_{label(budget)}.sig.json"
                r = measured_run.run_pipeline([*self.gen_cmd(size), "--out", "-"],
                                              [self.replay, "classify", "--trace", "-", "--out", sig,
                                               "--memory-budget", str(budget)], cap=self.cap)
                json_bytes, steps = generated(r["producer"]["stderr_tail"])
                runs.append(self.row(r, json_bytes, steps, "pipe", sig))
            row = median_run(runs)
            row["budget_bytes"] = budget
            row["within_budget"] = row["peak_rss_bytes"] <= budget if row["rc"] == 0 else None
            if row.get("signature_ids") is not None:
                ids = ids or row["signature_ids"]
                row["same_signatures"] = row.pop("signature_ids") == ids
            part["rows"].append(row)
            report.save()
            print(f"== budget {label(budget)}: " + (f"{row['wall_s']:.2f} s, peak {row['peak_rss_bytes'] / 1e6:.0f} MB"
                  if row["rc"] == 0 else f"exit {row['rc']}: {row.get('error')}"))
        over_floor = [r for r in part["rows"] if r["budget_bytes"] >= BUDGET_FLOOR and r["rc"] == 0]
        part["within_every_budget_from_floor"] = all(r["within_budget"] for r in over_floor) if over_floor else None
        report.save()

    def predict_row(self, r, json_bytes, steps, mode):
        """A `replay predict --json` run's row: the classify row's numbers, the prediction's."""
        row = self.row(r, json_bytes, steps, mode, self.work / "no_signature_file")
        if r["rc"] == 0:
            printed = json.loads(r["stdout"])
            row["predicted_steps"] = len(printed["steps"])
            row["predicted_us"] = printed["predicted_us"]
            printed.pop("trace", None)
            row["prediction"] = printed
        return row

    def predict_pipe_run(self, size):
        """`replay-tracegen | replay predict --trace - --memory-budget B --json`: streamed."""
        r = measured_run.run_pipeline([*self.gen_cmd(size), "--out", "-"],
                                      [self.replay, "predict", "--trace", "-", "--memory-budget",
                                       self.args.memory_budget, "--json"],
                                      cap=self.cap)
        json_bytes, steps = generated(r["producer"]["stderr_tail"])
        return self.predict_row(r, json_bytes, steps, "predict_pipe")

    def predict_file_run(self, size):
        """`replay predict --trace FILE --memory-budget 1T --json`: in memory, on a generated file."""
        fits, estimate = self.fits(size)
        if not fits:
            return {"mode": "predict_file", "json_bytes": size, "skipped":
                    f"would not fit the {self.cap / GB:.1f} GB cap: estimated peak {estimate / GB:.1f} GB"}
        path = self.work / f"predict_{label(size)}.json"
        try:
            json_bytes, steps = self.generate(path, size)
            r = measured_run.run([self.replay, "predict", "--trace", path, "--memory-budget", "1T",
                                  "--json"], cap=self.cap)
            return self.predict_row(r, json_bytes, steps, "predict_file")
        finally:
            path.unlink(missing_ok=True)

    def predict(self, report):
        """--predict: the streamed predict piped at each size, and in memory on the smallest."""
        part = report.data["predict"] = {
            "what": f"replay-tracegen --size S --out - | replay predict --trace - --memory-budget "
                    f"{self.args.memory_budget} --json (streamed, one step at a time); in memory: "
                    "replay predict --trace FILE --memory-budget 1T --json on a generated file",
            "rows": []}
        for size in self.args.sizes:
            row = self.predict_pipe_run(size)
            row["size"] = label(size)
            part["rows"].append(row)
            report.save()
            print(f"== predict {label(size)} streamed: {row['wall_s']:.2f} s, peak "
                  f"{row['peak_rss_bytes'] / 1e6:.0f} MB" + (f" (exit {row['rc']}: {row.get('error')})"
                                                             if row["rc"] else ""))
        memory = self.predict_file_run(self.args.sizes[0])
        memory["size"] = label(self.args.sizes[0])
        part["in_memory"] = memory
        first = part["rows"][0] if part["rows"] else {}
        if "prediction" in memory and "prediction" in first:
            part["same_prediction_streamed_and_in_memory"] = memory["prediction"] == first["prediction"]
        for row in [memory, *part["rows"]]:
            row.pop("prediction", None)
        part["rss_flat"] = flatness(part["rows"])
        report.save()
        if "wall_s" in memory:
            print(f"== predict {memory['size']} in memory: {memory['wall_s']:.2f} s, peak "
                  f"{memory['peak_rss_bytes'] / 1e6:.0f} MB; same prediction: "
                  f"{part.get('same_prediction_streamed_and_in_memory')}")

    def ranks(self, report):
        n, size = self.args.ranks, self.args.rank_size
        files, json_total = [], 0
        for rank in range(n):
            path = self.work / f"rank{rank}.json.gz"
            json_bytes, _ = self.generate(path, size, "--ranks", str(n), "--rank", str(rank), "--gzip")
            files.append(path)
            json_total += json_bytes
        part = {"ranks": n, "json_bytes_per_rank": size, "json_bytes": json_total,
                "gzip_bytes": sum(p.stat().st_size for p in files)}
        report.data["ranks"] = part
        try:
            form, reason = self.try_several()
            if form is None:
                part["one_call"] = {"unsupported": reason}
            else:
                sig = self.work / "ranks.sig.json"
                r = self.classify(files, sig, budget=None)
                part["one_call"] = {"form": form, "memory_budget": "default (none given)",
                                    **self.row(r, json_total, None, "ranks", sig)}
                ids = part["one_call"].pop("signature_ids", None)
                report.save()
                r = self.classify(files, sig)
                part["one_call_in_memory"] = {"form": form, "memory_budget": "1T",
                                              **self.row(r, json_total, None, "ranks", sig)}
                part["same_signatures_default_and_in_memory"] = (
                    part["one_call_in_memory"].pop("signature_ids", None) == ids)
            report.save()
            wall, peak, ok = 0.0, 0, True
            for i, path in enumerate(files):
                r = self.classify([path], self.work / f"rank{i}.sig.json")
                wall += r["wall_s"]
                peak = max(peak, r["peak_rss_bytes"])
                ok = ok and r["rc"] == 0
            part["separate_commands"] = {
                "what": "one `replay classify --trace rankN.json.gz` per rank, one after another",
                "ok": ok, "wall_s": wall, "gb_per_s": json_total / GB / wall, "peak_rss_bytes": peak}
        finally:
            for path in files:
                path.unlink(missing_ok=True)
        report.save()

    def hta(self, report):
        part = report.data["hta"] = {"package": f"HolisticTraceAnalysis=={bench_python.HTA_VERSION}",
                                     "cap_bytes": self.hta_cap, "runs": []}
        if self.args.quick or self.args.no_hta:
            part["skipped"] = "--quick" if self.args.quick else "--no-hta"
            report.save()
            return
        python, unavailable = bench_python.hta_python()
        if python is None:
            part["unavailable"] = unavailable
            report.save()
            return
        for size in self.args.hta_sizes:
            projected = project_seconds([r for r in part["runs"] if r["rc"] == 0], size)
            if projected is not None and projected > self.args.hta_timeout:
                part["stopped"] = {"json_bytes": size, "why":
                                   f"not run: its load time, extrapolated from the last two sizes "
                                   f"(power law), would be {projected:.0f} s, over --hta-timeout "
                                   f"{self.args.hta_timeout:.0f} s", "projected_load_s": projected}
                break
            if not self.disk_ok(size):
                part["stopped"] = {"json_bytes": size, "why": "not enough free disk"}
                break
            folder = pathlib.Path(tempfile.mkdtemp(dir=self.work, prefix="hta_"))
            path = folder / f"hta_{label(size)}.json"
            try:
                json_bytes, steps = self.generate(path, size)
                r = measured_run.run([python, "-c", bench_python.HTA, folder], cap=self.hta_cap,
                                     timeout=self.args.hta_timeout)
            finally:
                shutil.rmtree(folder, ignore_errors=True)
            run = {"json_bytes": json_bytes, "steps": steps, "rc": r["rc"], "wall_s": r["wall_s"],
                   "peak_rss_bytes": max(r["peak_rss_bytes"], r["watched_peak_rss_bytes"])}
            if r["rc"] == 0:
                loaded = json.loads(r["stdout"].strip().splitlines()[-1])
                run.update(load_s=loaded["load_s"], rows=loaded["rows"],
                           gb_per_s=json_bytes / GB / loaded["load_s"],
                           peak_over_json=run["peak_rss_bytes"] / json_bytes)
            part["runs"].append(run)
            report.save()
            if r["rc"] != 0:
                why = ("killed by the RSS watchdog at the cap" if r["killed_by_cap"] else
                       "timed out" if r["timed_out"] else f"exit {r['rc']}: {last_line(r['stderr_tail'])}")
                part["stopped"] = {"json_bytes": json_bytes, "why": why}
                break
        ok = [run for run in part["runs"] if run["rc"] == 0]
        part["largest_loaded_json_bytes"] = max((run["json_bytes"] for run in ok), default=0)
        report.save()


def project_seconds(runs, size):
    """HTA's load time at `size`, extrapolated from the last two loads by a power law (its time
    grows faster than the file: about quadratically on generated traces), or None."""
    if len(runs) < 2:
        return None
    (s1, t1), (s2, t2) = [(r["json_bytes"], r["load_s"]) for r in runs[-2:]]
    if s2 <= s1 or t1 <= 0 or t2 <= 0:
        return None
    exponent = max(1.0, math.log(t2 / t1) / math.log(s2 / s1))
    return t2 * (size / s2) ** exponent


def generated(stderr):
    """(json bytes, steps) from replay-tracegen's summary line."""
    m = re.search(r"(\d+) bytes of JSON, (\d+) steps", stderr)
    if not m:
        raise SystemExit(f"bench_huge: no summary from replay-tracegen: {stderr[-500:]}")
    return int(m.group(1)), int(m.group(2))


def last_line(text):
    """The message of a failure: its first `error` line, else its last line."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    errors = [line for line in lines if "error" in line.lower()]
    return (errors or lines or [""])[0 if errors else -1]


# Standard input hashed with SHA-256 in 8 MiB reads, nothing else (bench_huge's floor).
FLOOR_CONSUMER = """
import hashlib, sys
digest, raw, block = hashlib.sha256(), sys.stdin.buffer.raw, memoryview(bytearray(8 << 20))
while True:
    read = raw.readinto(block)
    if not read:
        break
    digest.update(block[:read])
print(digest.hexdigest())
"""


def median_floor(runs):
    """The floor run of median wall time, with every run's wall time."""
    done = sorted((r for r in runs if r["rc"] == 0), key=lambda r: r["wall_s"])
    if not done:
        return runs[-1]
    return {**done[len(done) // 2], "wall_s_runs": [r["wall_s"] for r in runs]}


def median_run(runs):
    """One row for several runs of the same size: the run of median wall time, with the
    median peak RSS and every run's wall time and peak (a single run's peak moves by several
    per cent with how the allocator's frees happen to be timed)."""
    done = [r for r in runs if r.get("rc") == 0]
    if not done:
        return runs[-1]
    done.sort(key=lambda r: r["wall_s"])
    row = dict(done[len(done) // 2])
    peaks = sorted(r["peak_rss_bytes"] for r in done)
    row["peak_rss_bytes"] = peaks[len(peaks) // 2]
    row["peak_over_json"] = row["peak_rss_bytes"] / row["json_bytes"]
    row["runs"] = len(runs)
    row["failed_runs"] = len(runs) - len(done)
    row["wall_s_runs"] = [r["wall_s"] for r in runs]
    row["peak_rss_bytes_runs"] = [r["peak_rss_bytes"] for r in runs]
    return row


def flatness(rows):
    done = [r for r in rows if r.get("rc") == 0]
    if len(done) < 2:
        return {"measured_sizes": len(done), "flat": None}
    peaks = [r["peak_rss_bytes"] for r in done]
    spread = (max(peaks) - min(peaks)) / min(peaks)
    out = {"from_json_bytes": done[0]["json_bytes"], "to_json_bytes": done[-1]["json_bytes"],
           "min_peak_rss_bytes": min(peaks), "max_peak_rss_bytes": max(peaks),
           "spread": spread, "flat": spread <= 0.10, "criterion": "(max - min) / min <= 10 %"}
    every = [p for r in done for p in r.get("peak_rss_bytes_runs", [])]
    if len(every) > len(done):
        out["criterion"] += " of each size's median peak"
        out["single_runs"] = {"min_peak_rss_bytes": min(every), "max_peak_rss_bytes": max(every),
                              "spread": (max(every) - min(every)) / min(every)}
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=sizes, default=None, help=f"JSON sizes [{DEFAULT_SIZES}]")
    parser.add_argument("--quick", action="store_true", help=f"sizes {QUICK_SIZES}, 8 ranks x 2M, no HTA")
    parser.add_argument("--ranks", type=int, default=8)
    parser.add_argument("--rank-size", type=parse_size, default=None, help="JSON bytes per rank [1G; 2M with --quick]")
    parser.add_argument("--hta-sizes", type=sizes, default=sizes(DEFAULT_HTA_SIZES))
    parser.add_argument("--hta-timeout", type=float, default=3600.0,
                        help="seconds one HTA load may take; a size whose extrapolated time is over it is not run")
    parser.add_argument("--no-hta", action="store_true")
    parser.add_argument("--no-floor", action="store_true",
                        help="skip the floor runs (the generator piped into SHA-256 alone, after each piped run)")
    parser.add_argument("--rss-cap", type=parse_size, default=None,
                        help="kill any measured process past this RSS [60 %% of MemAvailable]")
    parser.add_argument("--hta-cap", type=parse_size, default=None,
                        help="HTA's own RSS cap, where it stops [--rss-cap]")
    parser.add_argument("--repeats", type=int, default=None,
                        help="runs of each piped size; the row is their median [5; 1 with --quick]")
    parser.add_argument("--memory-budget", default="1G",
                        help="`replay classify --memory-budget` of the piped runs (the streamed classify) [1G]")
    parser.add_argument("--predict", action="store_true",
                        help="also `replay predict` at each size: streamed from a pipe under "
                             "--memory-budget, and in memory on the smallest size's file")
    parser.add_argument("--budgets", type=lambda t: sizes(t) if t else [], default=None,
                        help=f"--memory-budget values the smallest size is piped under [{DEFAULT_BUDGETS}; '' skips]")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--layout", choices=("kineto", "steps"), default="kineto",
                        help="replay-tracegen's event order: as Kineto writes a trace (every host op "
                             "first) or step by step [kineto]")
    parser.add_argument("--replay", default=str(TARGET / "release" / "replay"))
    parser.add_argument("--tracegen", default=str(TARGET / "release" / "replay-tracegen"))
    parser.add_argument("--work-dir", default=str(TARGET / "bench" / "huge"))
    parser.add_argument("--out", default=str(REPO / "results" / "bench_huge.json"))
    args = parser.parse_args(argv)
    args.sizes = sorted(args.sizes or sizes(QUICK_SIZES if args.quick else DEFAULT_SIZES))
    args.rank_size = args.rank_size or parse_size("2M" if args.quick else "1G")
    args.repeats = max(1, args.repeats or (1 if args.quick else 5))
    args.budgets = sizes(DEFAULT_BUDGETS) if args.budgets is None else args.budgets
    mem = meminfo()
    args.rss_cap = args.rss_cap or int(0.6 * mem["MemAvailable"])
    for binary in (args.replay, args.tracegen):
        if not os.access(binary, os.X_OK):
            print(f"bench_huge: {binary} is not built (cargo build --release -p replay-cli -p replay-tracegen)",
                  file=sys.stderr)
            return 2
    work = pathlib.Path(args.work_dir).resolve()
    if REPO.resolve() in work.parents and (REPO / "target").resolve() not in [work, *work.parents]:
        print(f"bench_huge: --work-dir must not be in the repository outside target/ ({work})", file=sys.stderr)
        return 2
    work.mkdir(parents=True, exist_ok=True)
    bench = Bench(args)
    report = Report(args.out, {
        "benchmark": "bench_huge",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "quick": args.quick,
        "machine": {"cores": os.cpu_count(), "mem_total_bytes": mem["MemTotal"],
                    "mem_available_bytes": mem["MemAvailable"], "load_average_at_start": list(os.getloadavg()),
                    "note": "a load average near or above the core count means other work shared the cores"},
        "rss_cap_bytes": args.rss_cap,
        "input": f"replay-tracegen (crates/tracegen), --seed {args.seed} --layout {args.layout}: "
                 "bf16 GPT-style training steps on an H100",
        "capabilities": {},
        "streaming": {"rows": []},
    })
    stdin_ok, reason = bench.try_stdin()
    report.data["capabilities"]["stdin"] = {"supported": stdin_ok, "reason": reason}
    streaming = report.data["streaming"]
    streaming["mode"] = "pipe" if stdin_ok else "file"
    streaming["what"] = ("replay-tracegen --size S --out - | replay classify --trace - (wall time of the pipeline)"
                         if stdin_ok else
                         "`--trace -` unsupported: replay classify --trace FILE on a generated file "
                         "(generation untimed, the file deleted after)")
    if stdin_ok and not args.no_floor:
        streaming["floor_what"] = ("after each piped run, replay-tracegen --size S --out - | python (hashlib "
                                   "SHA-256 of standard input, 8 MiB reads): the pipe and the hash the signature "
                                   "file's source.sha256 needs, nothing parsed")
    report.save()
    print(f"== stdin: {reason}")
    for size in args.sizes:
        if stdin_ok:
            # Each replay run followed by a floor run, so that both see the same machine.
            runs, floors = [], []
            for _ in range(args.repeats):
                runs.append(bench.pipe_run(size))
                if not args.no_floor:
                    floors.append(bench.floor_run(size))
            row = median_run(runs)
            if floors:
                row["floor"] = median_floor(floors)
        else:
            row = bench.file_run(size, "size")
        row["size"] = label(size)
        streaming["rows"].append(row)
        report.save()
        floor = row.get("floor", {})
        print(f"== {label(size)}: " + (row.get("skipped") or
              f"{row['wall_s']:.2f} s, {row.get('gb_per_s') or 0:.3f} GB/s, peak {row['peak_rss_bytes'] / 1e6:.0f} MB"
              + (f" (exit {row['rc']}: {row.get('error')})" if row["rc"] else "")
              + (f"; floor (generator | SHA-256 alone) {floor['wall_s']:.2f} s, {floor['gb_per_s']:.3f} GB/s"
                 if floor.get("gb_per_s") else "")))
    rows = [r for r in streaming["rows"] if r.get("rc") == 0]
    if rows:
        ids = rows[0].get("signature_ids")
        streaming["same_signatures_at_every_size"] = all(r.get("signature_ids") == ids for r in rows)
        for r in rows:
            r.pop("signature_ids", None)
    streaming["rss_flat"] = flatness(streaming["rows"])
    report.save()

    # The in-memory path on the largest size that fits (the file rows are it when `-` is unsupported).
    if stdin_ok:
        bench.file_run(args.sizes[0], "memory")  # calibrates the peak per byte
        memory = None
        for size in reversed(args.sizes):
            if bench.fits(size)[0]:
                memory = bench.file_run(size, "memory")
                memory["size"] = label(size)
                break
        if memory:
            memory.pop("signature_ids", None)
        report.data["in_memory"] = memory or {"skipped": "no size fits the cap"}
    else:
        fitted = [r for r in rows if r["mode"] == "file"]
        report.data["in_memory"] = {"same_as": "streaming rows (today's reader holds the file in memory)",
                                    **(fitted[-1] if fitted else {"skipped": "no size completed"})}
    report.save()

    if stdin_ok and args.budgets:
        bench.budgets(report)

    if args.predict:
        bench.predict(report)

    print(f"== {args.ranks} ranks x {label(args.rank_size)} gzipped")
    bench.ranks(report)
    print("== HTA")
    bench.hta(report)

    largest = rows[-1] if rows else None
    one_call = report.data["ranks"].get("one_call", {})
    report.data["goals"] = {
        "note": "issue 33's goals are for 1-30 GB on a quiet 2-core machine; other sizes only exercise the benchmark",
        "peak_rss_at_most_1GB": None if largest is None else largest["peak_rss_bytes"] <= 1e9,
        "at_least_1GB_per_s": None if largest is None else (largest["gb_per_s"] or 0) >= 1.0,
        "floor_gb_per_s_at_largest": None if largest is None else largest.get("floor", {}).get("gb_per_s"),
        "rss_flat_within_10pct": streaming["rss_flat"]["flat"],
        "ranks_aggregate_at_least_1GB_per_s": (one_call["gb_per_s"] >= 1.0) if one_call.get("gb_per_s") else None,
    }
    report.save()
    print(json.dumps(report.data["goals"], indent=1))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
