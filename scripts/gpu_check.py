#!/usr/bin/env python3
"""The stages of the prepared GPU check; run it through scripts/gpu_check.sh.

Stages (each fits one command of the GPU machine, well inside 9 minutes):
  selftest  replay devices; replay selftest (one replay per tier against libtorch);
            replay selftest --model on bloom-tiny exported here
  truth     replay isolated of the two H100 signature files; per signature its isolated
            median against the trace's own mean per invocation (the same GPU model recorded
            the traces), and each trace's step predicted from the isolated durations
  compare   replay compare of bloom-560m at seq-len 5 in float32 and seq-len 128 in bfloat16,
            with --energy nvml on CUDA
  scan      replay bench scan: replay's CUDA kernel and the libtorch baseline (cuda,torch) on
            a GPU, the Rust kernel and libtorch (cpu,torch) on the CPU; the seed's grid in every
            semiring, forward and both (quick: a 2x2x2 grid, Log and Max), every case up to 2^20
            edge values checked against the float64 reference before it is timed (the larger
            ones are timed unchecked: checking them all on the host would not fit the stage)
  mhc       replay bench mhc: on a GPU the offload simulation (--device cpu with the GPU present:
            inputs on the GPU, pinned D2H/H2D timed by CUDA events, stages 1-3 on the host) and
            --device cuda (torch and the fused CUDA Sinkhorn), swept over batch sizes with the
            measured break-even (full: T=1024; quick: --quick); on the CPU the --quick run.
            Its CSV rows and offload answer go into summary.json (no archive: OUT keeps 8 files)
  calibrate replay calibrate on the device: peaks, matmul GFLOPS (fp32, bf16), memory bandwidth
            through libtorch and replay's own copy/triad kernels, every fusion pattern
  quant     replay bench quant: every recipe (int8wo, int8dq, int4wo-128, float8wo,
            float8dq-tensor/row; on CUDA the CUDA kernels) on bfloat16 Linears, each checked
            against its dequantize-then-matmul reference; one not-implemented recipe whose row
            must say so; rows into summary.json only (no archive); full run on a GPU adds llama
  cpu       scripts/bench_isolated.py (run-to-run noise of isolated) and
            scripts/bench_accuracy.py (bloom-560m, bloom-tiny) on the CPU at --cpu-threads

Every stage merges its figures into OUT/summary.json and archives its files into
OUT/<stage>.tar.gz (quant: summary only), so OUT never holds more than 8 files. One failed
command never ends a stage: it is recorded with its exit status and the tail of its output.
--quick shrinks every stage to seconds (bloom-tiny only, small budgets): `make test` runs
`--device cpu --quick`.
A stage that needs CUDA on a machine without it is recorded as skipped, with the reason.
"""
import argparse
import csv
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STAGES = ("selftest", "truth", "compare", "scan", "mhc", "calibrate", "quant", "cpu")
# Stages whose whole result is in summary.json: no archive of their own, so the output folder
# stays within MAX_OUT_FILES.
SUMMARY_ONLY_STAGES = ("mhc", "quant")
SIGNATURE_FILES = ("h100_bert_small_infer", "h100_vit_infer")
# The output folder's budget on the GPU machine: 8 files come back.
MAX_OUT_FILES = 8


def replay_bin():
    return os.environ.get("REPLAY_BIN") or os.path.join(ROOT, "target/release/replay")


def bundle_dir():
    return os.environ.get("REPLAY_GPU_BUNDLE") or os.path.join(ROOT, "target/gpu-bundle")


class Log:
    """Everything the stages ran, with their output, in OUT/gpu_check.log."""

    def __init__(self, path):
        self.file = open(path, "a")

    def line(self, text):
        stamp = time.strftime("%H:%M:%S")
        print(f"[{stamp}] {text}", flush=True)
        self.file.write(f"[{stamp}] {text}\n")
        self.file.flush()

    def block(self, text):
        self.file.write(text if text.endswith("\n") else text + "\n")
        self.file.flush()


def run(log, cmd, timeout, cwd=None):
    """Runs cmd; returns {cmd, rc, seconds, stdout, stderr_tail}. Never raises."""
    log.line("$ " + " ".join(map(str, cmd)))
    start = time.monotonic()
    try:
        p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True,
                           timeout=timeout, cwd=cwd)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        rc = "timeout"
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        err = (e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")) + \
            f"\n(killed after {timeout} s)"
    except OSError as e:
        rc, out, err = "not started", "", str(e)
    seconds = round(time.monotonic() - start, 2)
    log.block(out)
    if err.strip():
        log.block("--- stderr\n" + err)
    log.line(f"  -> exit {rc} in {seconds} s")
    return {"cmd": " ".join(map(str, cmd)), "rc": rc, "seconds": seconds,
            "stdout": out, "stderr_tail": err[-2000:]}


def ok(result):
    return result["rc"] == 0


def record(result):
    """A command's result as the summary keeps it (no full output)."""
    r = {k: v for k, v in result.items() if k != "stdout"}
    if ok(result):
        r.pop("stderr_tail")
    return r


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def write_json_atomic(path, value):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(value, f, indent=2, allow_nan=False, default=str)
        f.write("\n")
    os.replace(tmp, path)


def cuda_status(log, replay):
    """(available, reason, devices JSON) from `replay devices --json`."""
    r = run(log, [replay, "devices", "--json"], timeout=120)
    devices = None
    if ok(r):
        try:
            devices = json.loads(r["stdout"])
        except ValueError:
            devices = None
    # `replay devices --json` serialises the CUDA side as {"Ok": inventory} or {"Err": why}.
    cuda = (devices or {}).get("cuda") if isinstance(devices, dict) else None
    inventory = cuda.get("Ok") if isinstance(cuda, dict) else None
    if isinstance(inventory, dict) and inventory.get("devices"):
        return True, None, devices
    reason = cuda.get("Err") if isinstance(cuda, dict) else None
    if reason is None and not ok(r):
        reason = "replay devices failed: " + r["stderr_tail"].strip()[-300:]
    return False, reason or "replay devices lists no CUDA device", devices


def ensure_model(log, replay, models_dir, name, dtype="float32"):
    """models_dir/NAME[-DTYPE].pt, exported with `replay export` when missing."""
    suffix = "" if dtype == "float32" else "-" + dtype
    path = os.path.join(models_dir, f"{name}{suffix}.pt")
    if os.path.exists(path):
        return path, None
    os.makedirs(models_dir, exist_ok=True)
    r = run(log, [replay, "export", "--model", name, "--dtype", dtype, "--out", path], timeout=480)
    return (path if ok(r) else None), record(r)


# ----------------------------------------------------------------------------------------------
# Stages
# ----------------------------------------------------------------------------------------------

def stage_selftest(ctx):
    log, replay, work = ctx["log"], ctx["replay"], ctx["work"]
    summary = {"device": ctx["device"]}
    r = run(log, [replay, "devices"], timeout=120)
    summary["devices"] = record(r)
    with open(os.path.join(work, "devices.txt"), "w") as f:
        f.write(r["stdout"])
    r = run(log, [replay, "selftest", "--device", ctx["device"], "--json"], timeout=300)
    summary["tiers"] = checks_summary(r, os.path.join(work, "selftest.json"))
    model, export = ensure_model(log, replay, ctx["models_dir"], "bloom-tiny")
    if model is None:
        summary["model"] = {"export": export}
    else:
        r = run(log, [replay, "selftest", "--device", ctx["device"], "--model", model, "--json"],
                timeout=420)
        summary["model"] = checks_summary(r, os.path.join(work, "selftest_model.json"))
    summary["passed"] = all(s.get("failed", 1) == 0 for s in (summary["tiers"], summary["model"]))
    return summary


def checks_summary(result, save_to):
    """The pass/fail list of a `replay selftest --json` run."""
    try:
        parsed = json.loads(result["stdout"])
    except ValueError:
        parsed = None
    if parsed is not None:
        write_json_atomic(save_to, parsed)
    checks = (parsed or {}).get("checks", [])
    out = {
        "command": record(result),
        "passed": sum(1 for c in checks if c.get("passed")),
        "failed": sum(1 for c in checks if not c.get("passed")),
        "checks": [{k: c.get(k) for k in ("stage", "tier", "name", "passed", "detail")} for c in checks],
    }
    if not checks:
        out["failed"] = 1  # no checks ran: the command itself failed
    return out


def signature_errors(isolated):
    """Per signature: the isolated prediction against the trace's own mean per invocation."""
    rows = []
    for r in isolated.get("results", []):
        predicted, trace_mean = r.get("predicted_us"), r.get("trace_mean_us")
        if r.get("status") not in ("ok", "included") or predicted is None or not trace_mean:
            continue
        rows.append({
            "id": r["id"], "name": r["name"], "tier": r.get("tier"), "count": r.get("count"),
            "trace_mean_us": trace_mean, "isolated_us": predicted,
            "error_percent": 100.0 * (predicted - trace_mean) / trace_mean,
            "trace_total_us": r.get("trace_total_us"),
        })
    return rows


def error_distribution(rows):
    if not rows:
        return {"signatures": 0}
    errors = [abs(r["error_percent"]) for r in rows]
    total = sum(r["trace_total_us"] or 0 for r in rows)
    weighted = (sum(abs(r["error_percent"]) * (r["trace_total_us"] or 0) for r in rows) / total
                if total else None)
    worst = sorted(rows, key=lambda r: -abs(r["error_percent"]))[:5]
    return {
        "signatures": len(rows),
        "median_abs_error_percent": statistics.median(errors),
        "share_within_10_percent": sum(e <= 10 for e in errors) / len(errors),
        "time_weighted_abs_error_percent": weighted,
        "worst": [{k: w[k] for k in ("name", "id", "tier", "error_percent", "trace_mean_us", "isolated_us")}
                  for w in worst],
    }


def trace_path(name):
    for folder in (os.path.join(bundle_dir(), "traces"), os.path.join(ROOT, "../shared/traces/kineto")):
        path = os.path.join(folder, name + ".json.gz")
        if os.path.exists(path):
            return path
    return None


def stage_truth(ctx):
    log, replay, work = ctx["log"], ctx["replay"], ctx["work"]
    summary = {"device": ctx["device"], "traces": {}}
    budget = ["--max-time-per-kernel", "0.01", "--rounds", "1"] if ctx["quick"] else []
    for name in SIGNATURE_FILES:
        out = os.path.join(work, name)
        entry = {}
        r = run(log, [replay, "isolated", "--kernels", os.path.join(ROOT, "signatures", name + ".json"),
                      "--device", ctx["device"], "--quiet", "--output-dir", out, *budget], timeout=480)
        entry["isolated"] = record(r)
        isolated = load_json(os.path.join(out, "isolated.json"))
        if isolated is not None:
            rows = signature_errors(isolated)
            entry["signature_error"] = error_distribution(rows)
            entry["by_tier"] = {str(t): error_distribution([r for r in rows if r["tier"] == t])
                                for t in sorted({r["tier"] for r in rows}, key=str)}
            entry["not_replayed"] = [{"name": r["name"], "status": r["status"], "reason": r.get("reason")}
                                     for r in isolated["results"] if r["status"] not in ("ok", "included")]
            trace = trace_path(name)
            if trace is None:
                entry["timeline"] = {"skipped": f"{name}.json.gz is neither in the bundle nor in ../shared"}
            else:
                p = run(log, [replay, "predict", "--trace", trace, "--isolated",
                              os.path.join(out, "isolated.json"), "--json"], timeout=120)
                try:
                    pred = json.loads(p["stdout"])
                    entry["timeline"] = {
                        "predicted_us": pred["predicted_us"], "measured_us": pred["measured_us"],
                        "error_percent": pred["error_percent"],
                        "self_check_error_percent": pred["self_check"]["error_percent"],
                        "kernel_sum_us": pred["self_check"]["kernel_sum_us"],
                    }
                    write_json_atomic(os.path.join(out, "predict.json"), pred)
                except (ValueError, KeyError):
                    entry["timeline"] = {"command": record(p)}
        summary["traces"][name] = entry
    return summary


def compare_summary(report):
    p = report.get("predictions", {})
    out = {
        "measured_us": report.get("full_model_inference_us"),
        "sum_error_percent": (p.get("sum") or {}).get("error_percent"),
        "timeline_error_percent": (p.get("timeline") or {}).get("error_percent"),
        "best": p.get("best"),
        "coverage": (report.get("coverage") or {}).get("replayed_share_of_trace_time"),
    }
    energy = report.get("energy")
    if energy:
        out["energy"] = {k: energy.get(k) for k in ("predicted_joules", "measured_joules", "error_percent", "method")}
    return out


def stage_compare(ctx):
    log, replay, work = ctx["log"], ctx["replay"], ctx["work"]
    summary = {"device": ctx["device"], "runs": {}}
    if ctx["quick"]:
        cases = [("bloom-tiny", "float32", 5)]
        timing = ["--warmup", "3", "--runs", "10", "--max-time-per-kernel", "0.02", "--rounds", "1"]
    else:
        cases = [("bloom-560m", "float32", 5), ("bloom-560m", "bfloat16", 128)]
        timing = ["--warmup", "10", "--runs", "100"]
    energy = ["--energy", "nvml"] if ctx["device"].startswith("cuda") else []
    if not energy:
        summary["energy"] = "skipped: NVML measures a GPU; the CPU run has no energy probe here"
    threads = ["--threads", str(ctx["cpu_threads"])] if ctx["device"] == "cpu" else []
    for model_name, dtype, seq_len in cases:
        key = f"{model_name}-{dtype}-seq{seq_len}"
        model, export = ensure_model(log, replay, ctx["models_dir"], model_name, dtype)
        if model is None:
            summary["runs"][key] = {"export": export}
            continue
        out = os.path.join(work, key)
        r = run(log, [replay, "compare", "--model", model, "--device", ctx["device"],
                      "--seq-len", seq_len, "--quiet", "--output-dir", out, *timing, *energy, *threads],
                timeout=540)
        report = load_json(os.path.join(out, "comparison_report.json"))
        entry = compare_summary(report) if report else {}
        entry["command"] = record(r)
        summary["runs"][key] = entry
    return summary


def stage_cpu(ctx):
    log, work = ctx["log"], ctx["work"]
    py = sys.executable
    threads = str(ctx["cpu_threads"])
    summary = {"threads": ctx["cpu_threads"], "cores": os.cpu_count()}
    noise = os.path.join(work, "bench_isolated.json")
    args = ["--budget", "0.01", "--rounds", "1"] if ctx["quick"] else []
    r = run(log, [py, os.path.join(ROOT, "scripts/bench_isolated.py"), "--replay", ctx["replay"],
                  "--threads", threads, "--out", noise, *args], timeout=420)
    summary["isolated_noise"] = {"command": record(r), "result": load_json(noise)}
    accuracy = os.path.join(work, "bench_accuracy.json")
    models = "bloom-tiny" if ctx["quick"] else "bloom-560m,bloom-tiny"
    repeats = "1" if ctx["quick"] else "3"
    extra = ["--runs", "10", "--max-time-per-kernel", "0.02"] if ctx["quick"] else []
    # Sequence length 5 only: both sizes of bloom-560m three times do not fit one command.
    r = run(log, [py, os.path.join(ROOT, "scripts/bench_accuracy.py"), "--replay", ctx["replay"],
                  "--models-dir", ctx["models_dir"], "--models", models, "--repeats", repeats,
                  "--seq-lens", "5", "--threads", threads, "--out", accuracy, *extra], timeout=480)
    summary["accuracy"] = {"command": record(r), "result": load_json(accuracy)}
    return summary


def scan_summary(csv_path):
    """Per backend and phase: cases by status, and the median time of the ok ones (ms)."""
    import csv
    out = {}
    if not os.path.exists(csv_path):
        return out
    with open(csv_path, newline="") as f:
        for row in csv.DictReader(f):
            key = f"{row['backend']}/{row['semiring']}/{row['phase']}"
            entry = out.setdefault(key, {"status": {}, "times_ms": []})
            entry["status"][row["status"]] = entry["status"].get(row["status"], 0) + 1
            if row["status"] == "ok" and row["time_ms_median"]:
                entry["times_ms"].append(float(row["time_ms_median"]))
    for entry in out.values():
        times = sorted(entry.pop("times_ms"))
        entry["median_time_ms"] = times[len(times) // 2] if times else None
    return out


def stage_scan(ctx):
    """The semiring-scan suite on the device: its own kernel (cuda) and the libtorch baseline
    (torch) on a GPU, the Rust kernel (cpu) and torch on the CPU; every case is checked against
    the float64 reference before it is timed (a wrong result is an error row)."""
    log, replay, work = ctx["log"], ctx["replay"], ctx["work"]
    on_gpu = ctx["device"].startswith("cuda")
    backends = "cuda,torch" if on_gpu else "cpu,torch"
    if ctx["quick"]:
        grid = ["--T", "64,128", "--K", "4,8", "--C", "3,6", "--phases", "forward,both",
                "--semirings", "Log,Max", "--max-time-per-case", "0.05"]
    else:
        grid = ["--phases", "forward,both", "--semirings", "Log,Max,Entropy",
                "--check-limit", str(1 << 20), "--max-time-per-case", "0.1"]
    out = os.path.join(work, "scan")
    r = run(log, [replay, "bench", "scan", "--device", ctx["device"], "--backends", backends,
                  "--output-dir", out, "--quiet", *grid], timeout=570)
    return {"backends": backends, "command": record(r),
            "cases": scan_summary(os.path.join(out, "benchmark_full.csv"))}


def mhc_rows(csv_path):
    """benchmark_results.csv of replay bench mhc as a list of dicts (empty when missing)."""
    import csv
    if not os.path.exists(csv_path):
        return []
    with open(csv_path, newline="") as f:
        return [{k: row[k] for k in ("Device", "BatchSize", "Dtype", "Impl", "Case", "Status", "Time(ms)",
                                     "BW(GB/s)", "Time_min(ms)", "Time_max(ms)", "Note")}
                for row in csv.DictReader(f)]


def stage_mhc(ctx):
    """replay bench mhc: on a GPU the offload simulation and the all-GPU run side by side over
    batch sizes (the measured break-even), on the CPU the quick run; every fused stage is
    checked against torch's before it is timed (a wrong result is an error row)."""
    log, replay, work = ctx["log"], ctx["replay"], ctx["work"]
    on_gpu = ctx["device"].startswith("cuda")
    size = ["--quick"] if ctx["quick"] else ["--seq", "1024"]
    timing = ["--warmup", "1", "--iters", "3"]
    out = os.path.join(work, "mhc")
    commands = []
    if on_gpu:
        # --device cpu with the GPU present: the seed's offload simulation, swept, and the
        # same batch sizes with --device cuda (run by the sweep itself).
        commands.append(run(log, [replay, "bench", "mhc", "--device", "cpu", "--sweep-bs", *size, *timing,
                                  "--output-dir", out], timeout=420))
        # The seed's default size on the GPU alone: torch against the fused CUDA Sinkhorn.
        commands.append(run(log, [replay, "bench", "mhc", "--device", ctx["device"], *timing,
                                  "--output-dir", out], timeout=150))
    else:
        commands.append(run(log, [replay, "bench", "mhc", "--device", "cpu", *size, *timing,
                                  "--output-dir", out], timeout=300))
    answer = os.path.join(out, "offload_answer.md")
    return {"commands": [record(c) for c in commands],
            "rows": mhc_rows(os.path.join(out, "benchmark_results.csv")),
            "offload_answer": open(answer).read() if os.path.exists(answer) else None}


def stage_calibrate(ctx):
    """replay calibrate on the device: its peaks and how they were found, matmul GFLOPS (fp32
    and bf16), memory bandwidth through libtorch and replay's own copy and triad kernels, every
    fusion pattern (quick: fp32 matmul and memory only)."""
    log, replay, work = ctx["log"], ctx["replay"], ctx["work"]
    out = os.path.join(work, "calibrate", "profile.json")
    cmd = [replay, "calibrate", "--device", ctx["device"], "--quick", "--output", out, "--quiet"]
    if not ctx["quick"]:
        cmd += ["--dtypes", "float32,bfloat16", "--fusion-patterns", "all"]
    r = run(log, cmd, timeout=570)
    profile = load_json(out) or {}
    ops = profile.get("operation_profiles", {})
    return {
        "command": record(r),
        "peak_gflops": profile.get("theoretical_peak_gflops"),
        "peak_gflops_by_dtype": profile.get("theoretical_peak_gflops_by_dtype"),
        "peak_bandwidth_gbps": profile.get("theoretical_bandwidth_gbps"),
        "peak_sources": [profile.get("theoretical_peak_source"), profile.get("theoretical_bandwidth_source")],
        "gflops": {k: v.get("measured_gflops") for k, v in ops.items() if v.get("operation_type") == "matmul"},
        "bandwidth_gbps": {k: v.get("achieved_bandwidth_gbps") for k, v in ops.items() if v.get("memory_bound")},
        "fusion": {name: [(f.get("input_shape"), f.get("speedup_factor"), f.get("verdict")) for f in sizes]
                   for name, sizes in profile.get("fusion_profiles", {}).items()},
        "failures": profile.get("failures", {}),
    }


QUANT_RECIPES = ["baseline", "int8wo", "int8dq", "int4wo-128", "int4wo-128-hqq", "float8wo",
                 "float8dq-tensor", "float8dq-row"]


def quant_config(device, quick, out):
    """The quant stage's YAML: every recipe replay implements (and one it does not, whose row
    must say not_implemented) on a decode-sized and a prefill-sized bfloat16 Linear; the full run
    adds the seed's LLaMa-2 70B shapes on a GPU."""
    shapes = [[32, 1024, 1024], [256, 1024, 1024]] if quick else [[32, 4096, 4096], [4096, 4096, 4096]]
    generators = [{"name": "custom", "shapes": shapes}]
    if not quick and device.startswith("cuda"):
        generators.append({"name": "llama"})
    return {
        "benchmark_mode": "inference",
        "quantization_config_recipe_names": QUANT_RECIPES,
        "output_dir": out,
        "model_params": [{
            "matrix_shapes": generators,
            "high_precision_dtype": "torch.bfloat16",
            "compile": "false",
            "device": device,
            "model_type": "linear",
            "enable_profiler": False,
            "enable_memory_profiler": True,
        }],
    }


def quant_summary(csv_path):
    """Each row of a `replay bench quant` CSV: status, times, speedup, SQNR, message."""
    rows = []
    if not os.path.exists(csv_path):
        return rows
    with open(csv_path, newline="") as f:
        for r in csv.DictReader(f):
            rows.append({k: r.get(k) for k in (
                "quantization", "m", "k", "n", "status", "baseline_inference_time_in_ms",
                "quantized_inference_time_in_ms", "speedup", "sqnr_db", "memory_stats", "error_msg")})
    return rows


def stage_quant(ctx):
    """replay bench quant on the device: every recipe as libtorch ops (on a GPU the CUDA kernels:
    _weight_int4pack_mm, _int_mm, _scaled_mm with row scales), each checked against its
    dequantize-then-matmul reference before it is timed; a row with status error is a failure.
    Its rows go into summary.json (no archive)."""
    log, replay, work = ctx["log"], ctx["replay"], ctx["work"]
    out = os.path.join(work, "quant")
    config = os.path.join(work, "quant.yml")
    # JSON is YAML: no YAML writer needed on the GPU machine.
    write_json_atomic(config, quant_config(ctx["device"], ctx["quick"], out))
    r = run(log, [replay, "bench", "quant", "--config", config, "--quiet",
                  "--runs", "5" if ctx["quick"] else "100"], timeout=570)
    found = sorted(f for f in os.listdir(out) if f.startswith("results_")) if os.path.isdir(out) else []
    rows = quant_summary(os.path.join(out, found[-1])) if found else []
    entry = {"command": record(r), "rows": rows,
             "statuses": {s: sum(1 for x in rows if x["status"] == s) for s in {x["status"] for x in rows}}}
    wrong = [f"{x['quantization']} ({x['m']}, {x['k']}, {x['n']}): {x['error_msg']}"
             for x in rows if x["status"] == "error"]
    if wrong:
        entry["error"] = f"{len(wrong)} row(s) with status error: " + "; ".join(wrong)[:2000]
    elif not rows:
        entry["error"] = "replay bench quant wrote no rows"
    return entry


STAGE_FUNCTIONS = {"selftest": stage_selftest, "truth": stage_truth, "compare": stage_compare,
                   "scan": stage_scan, "mhc": stage_mhc, "calibrate": stage_calibrate,
                   "quant": stage_quant, "cpu": stage_cpu}
CUDA_STAGES = ("selftest", "truth", "compare", "scan", "mhc", "calibrate", "quant")


def archive(work, out, stage):
    """OUT/<stage>.tar.gz of the stage's files (replacing an earlier one)."""
    path = os.path.join(out, f"{stage}.tar.gz")
    tmp = path + ".tmp"
    with tarfile.open(tmp, "w:gz") as tar:
        tar.add(work, arcname=stage)
    os.replace(tmp, path)
    return os.path.basename(path)


def machine():
    info = {"hostname": platform.node(), "cpu_cores": os.cpu_count(), "python": sys.version.split()[0]}
    try:
        import torch  # the wrapper checked that this is the torch of the bundle
        info["torch"] = torch.__version__
        if torch.cuda.is_available():
            info["gpu"] = torch.cuda.get_device_name(0)
    except Exception as e:  # noqa: BLE001 - the summary says what went wrong, the run goes on
        info["torch"] = f"not importable: {e}"
    manifest = load_json(os.path.join(bundle_dir(), "manifest.json"))
    if manifest:
        info["bundle"] = {k: manifest.get(k) for k in ("commit", "built_at", "torch_version", "total_bytes")}
    return info


def main(argv=None):
    ap = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog=__doc__.split("\n", 1)[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stage", default="all", choices=("all",) + STAGES,
                    help="one stage (each fits one 10-minute command), or all in order")
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"),
                    help="device of the selftest, truth, compare, scan and calibrate stages (default cuda)")
    ap.add_argument("--quick", action="store_true", help="every stage in seconds (bloom-tiny, small budgets)")
    ap.add_argument("--out", default=os.path.join(ROOT, "results/gpu_check"),
                    help="output folder: summary.json, gpu_check.log, one archive per stage")
    ap.add_argument("--cpu-threads", type=int, default=None,
                    help="libtorch threads of the cpu stage (default: 8 on the full run, 2 with --quick)")
    ap.add_argument("--models-dir", default=os.path.join(ROOT, "target/gpu-check-models"),
                    help="exported models are kept here (never in --out, whose files travel back)")
    args = ap.parse_args(argv)
    if args.cpu_threads is None:
        args.cpu_threads = 2 if args.quick else 8
    if args.cpu_threads < 1:
        ap.error("--cpu-threads must be at least 1")

    replay = replay_bin()
    if not os.access(replay, os.X_OK):
        print(f"gpu_check: {replay} is not an executable (make gpu-bundle)", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    log = Log(os.path.join(args.out, "gpu_check.log"))
    summary_path = os.path.join(args.out, "summary.json")
    summary = load_json(summary_path) or {}
    summary.setdefault("stages", {})
    summary["machine"] = machine()
    summary["replay"] = run(log, [replay, "--version"], timeout=60)["stdout"].strip()

    device = args.device
    cuda_ok, cuda_reason, devices = cuda_status(log, replay)
    summary["cuda_available"] = cuda_ok
    if not cuda_ok:
        summary["cuda_unavailable_reason"] = cuda_reason
    if devices is not None:
        summary["devices"] = devices

    stages = STAGES if args.stage == "all" else (args.stage,)
    failures = 0
    for stage in stages:
        started = time.monotonic()
        entry = {"device": device, "quick": args.quick,
                 "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        if stage in CUDA_STAGES and device == "cuda" and not cuda_ok:
            entry["skipped"] = f"needs CUDA: {cuda_reason}"
            log.line(f"stage {stage}: skipped ({entry['skipped']})")
        else:
            log.line(f"stage {stage} on {device if stage in CUDA_STAGES else 'cpu'}"
                     f"{' (quick)' if args.quick else ''}")
            work = tempfile.mkdtemp(prefix=f"gpu-check-{stage}-")
            ctx = {"log": log, "replay": replay, "work": work, "device": device,
                   "quick": args.quick, "models_dir": args.models_dir, "cpu_threads": args.cpu_threads}
            try:
                entry.update(STAGE_FUNCTIONS[stage](ctx))
            except Exception as e:  # noqa: BLE001 - one broken stage must not end the others
                entry["error"] = f"{type(e).__name__}: {e}"
                log.line(f"stage {stage}: {entry['error']}")
            if stage not in SUMMARY_ONLY_STAGES:
                entry["archive"] = archive(work, args.out, stage)
            shutil.rmtree(work, ignore_errors=True)
        entry["wall_s"] = round(time.monotonic() - started, 1)
        failed_commands = count_failed(entry)
        entry["failed_commands"] = failed_commands
        failures += failed_commands
        summary["stages"][stage] = entry
        write_json_atomic(summary_path, summary)
        log.line(f"stage {stage}: {entry['wall_s']} s, {failed_commands} failed command(s)")

    files = sorted(os.listdir(args.out))
    if len(files) > MAX_OUT_FILES:
        log.line(f"warning: {len(files)} files in {args.out}; only {MAX_OUT_FILES} come back from the GPU machine")
    log.line(f"summary: {summary_path}")
    return 1 if failures else 0


def count_failed(value):
    """Commands in a stage's entry that did not exit 0, and checks that failed."""
    n = 0
    if isinstance(value, dict):
        if "rc" in value and "cmd" in value and value["rc"] != 0:
            n += 1
        if "error" in value and isinstance(value["error"], str):
            n += 1
        for k, v in value.items():
            if k != "stdout":
                n += count_failed(v)
    elif isinstance(value, list):
        n += sum(count_failed(v) for v in value)
    return n


if __name__ == "__main__":
    sys.exit(main())
