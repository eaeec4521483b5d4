"""The stages of the prepared GPU check (scripts/gpu_check.py runs them in order).

Each stage is `stage_NAME(ctx, entry)`: it fills `entry` as it goes, so that a stage stopped at
the end of its slice (StageCut) keeps what it finished, and sizes its work to `ctx.slice_s`,
the seconds it was given. Every command goes through `ctx.run`, which never outlasts the slice.
"""
import csv
import os
import shutil
import statistics
import tempfile

from gpu_check_compare import stage_compare
from gpu_check_compiled import stage_compiled
from gpu_check_sequence import run_et_pair, run_sequence
from gpu_check_runner import (ROOT, StageCut, bundle_dir, find_model, load_json, model_file, ok,  # noqa: F401
                              per_kernel_budget, record, signed_error, write_json_atomic)

SIGNATURE_FILES = ("h100_bert_small_infer", "h100_vit_infer")


def test_hook_hang(stage):
    """REPLAY_GPU_CHECK_HANG=STAGE[,STAGE]: the stage starts with a call that never returns,
    as a hung CUDA call would (a test hook: the watchdog must kill it at the slice's end)."""
    return stage in os.environ.get("REPLAY_GPU_CHECK_HANG", "").split(",")


# ----------------------------------------------------------------------------------------------
# selftest
# ----------------------------------------------------------------------------------------------

def checks_summary(result, save_to):
    """The pass/fail list of a `replay selftest --json` run."""
    import json
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


def stage_selftest(ctx, entry):
    """replay devices; replay selftest (every tier, the scan, mHC and bandwidth kernels against
    their references); replay selftest --model bloom-tiny (carried in the bundle)."""
    entry["device"] = ctx.device
    r = ctx.run([ctx.replay, "devices"], 60)
    entry["devices"] = record(r)
    with open(os.path.join(ctx.work, "devices.txt"), "w") as f:
        f.write(r["stdout"])
    r = ctx.run([ctx.replay, "selftest", "--device", ctx.device, "--json"], 300)
    entry["tiers"] = checks_summary(r, os.path.join(ctx.work, "selftest.json"))
    ctx.checkpoint()
    model = ctx.model("bloom-tiny", "float32", entry)
    if model is not None:
        r = ctx.run([ctx.replay, "selftest", "--device", ctx.device, "--model", model, "--json"], 300)
        entry["model"] = checks_summary(r, os.path.join(ctx.work, "selftest_model.json"))
    entry["passed"] = all(s.get("failed", 1) == 0 for s in (entry["tiers"], entry.get("model", {})))


# ----------------------------------------------------------------------------------------------
# truth
# ----------------------------------------------------------------------------------------------

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


def timing_used(isolated):
    """What timed an isolated.json's replays: signatures per timer (each result's stats.timer:
    on a GPU `CUDA events behind a blocking kernel on ...`, or `CUDA events on ...` without it)
    and the segments whose blocking kernel timed out."""
    timers, timeouts = {}, 0
    for r in isolated.get("results", []):
        stats = r.get("stats") or {}
        if r.get("replayed_as") != r.get("id") or not stats:
            continue
        timer = stats.get("timer") or "not recorded"
        timers[timer] = timers.get(timer, 0) + 1
        timeouts += stats.get("blocking_timeouts", 0)
    return {"timers": timers, "blocking_timeouts": timeouts}


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
        "median_error_percent": statistics.median(r["error_percent"] for r in rows),
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


H200_NOTE = ("ran on an H200, the traces were recorded on an H100: same SM count and clocks, "
             "1.4x the memory bandwidth, so memory-bound kernels (copies, element-wise, "
             "reductions: tiers 1 and 3) should replay faster than the trace says and "
             "compute-bound GEMMs (tier 2) about the same; the errors below are H200 against "
             "H100, not replay's error on one GPU")


def truth_machine(device, gpu_name):
    """Where the truth stage ran against where its traces were recorded; on an H200, the note
    that its errors are H200 against H100."""
    on_gpu = device.startswith("cuda")
    out = {"ran_on": (gpu_name or "unknown GPU") if on_gpu else "cpu"}
    if on_gpu and "H200" in (gpu_name or ""):
        out["h200"] = H200_NOTE
    return out


# The truth stage's reserve for the linear Execution Trace pair (classify, then its iteration
# re-run: about 10 s on a GPU or a 2-core CPU).
ET_PAIR_SECONDS = 15


def stage_truth(ctx, entry):
    """replay isolated of both H100 signature files on the device; per signature its isolated
    median against the trace's own mean per invocation, per tier, each trace's step predicted
    from the isolated durations (replay predict --isolated), and the step re-run in order on
    the device (replay sequence: each op in context against the trace); then PARAM's linear pair,
    a trace recorded without shapes completed from its Execution Trace, its iteration re-run
    with the model's data flow (run_et_pair)."""
    entry["device"] = ctx.device
    entry["recorded_on"] = "NVIDIA H100 (both traces)"
    entry.update(truth_machine(ctx.device, ctx.gpu_name))
    entry["traces"] = {}
    for i, name in enumerate(SIGNATURE_FILES):
        sigs = os.path.join(ROOT, "signatures", name + ".json")
        n = len((load_json(sigs) or {}).get("signatures", [])) or 50
        # Both files share what is left of the slice, less the linear pair's reserve; a predict
        # call (~1 s) follows each.
        share = (ctx.stage_left() - ET_PAIR_SECONDS - 3.0 * (len(SIGNATURE_FILES) - i)) / (len(SIGNATURE_FILES) - i)
        budget = ["--max-time-per-kernel", str(per_kernel_budget(share, n))]
        if ctx.quick or ctx.device == "cpu":
            # The H100 shapes on a CPU: one call of a large GEMM takes tens of ms, so the
            # minimum samples, not the budget, would set the time.
            budget += ["--rounds", "1", "--min-samples", "3"]
        out = os.path.join(ctx.work, name)
        t = entry["traces"].setdefault(name, {"signatures_in_file": n})
        r = ctx.run([ctx.replay, "isolated", "--kernels", sigs, "--device", ctx.device, "--quiet",
                     "--output-dir", out, *budget], 480)
        t["isolated"] = record(r)
        isolated = load_json(os.path.join(out, "isolated.json"))
        if isolated is None:
            continue
        rows = signature_errors(isolated)
        t["timing"] = timing_used(isolated)
        t["signature_error"] = error_distribution(rows)
        t["by_tier"] = {str(k): error_distribution([r for r in rows if r["tier"] == k])
                        for k in sorted({r["tier"] for r in rows}, key=str)}
        t["not_replayed"] = [{"name": r["name"], "status": r["status"], "reason": r.get("reason")}
                             for r in isolated["results"] if r["status"] not in ("ok", "included")]
        ctx.checkpoint()
        if ctx.device.startswith("cuda") and not ctx.quick:
            # The same replay with each sample's calls issued straight into the events, as
            # before the blocking kernel (the first GPU run: 1-2 us kernels read 5-7 us), side
            # by side in one run.
            plain = out + "-unblocked"
            r = ctx.run([ctx.replay, "isolated", "--kernels", sigs, "--device", ctx.device, "--quiet",
                         "--no-blocking-kernel", "--output-dir", plain, *budget], 480)
            unblocked = load_json(os.path.join(plain, "isolated.json"))
            t["unblocked"] = {"isolated": record(r)}
            if unblocked is not None:
                plain_rows = signature_errors(unblocked)
                t["unblocked"]["timing"] = timing_used(unblocked)
                t["unblocked"]["signature_error"] = error_distribution(plain_rows)
                t["unblocked"]["by_tier"] = {
                    str(k): error_distribution([r for r in plain_rows if r["tier"] == k])
                    for k in sorted({r["tier"] for r in plain_rows}, key=str)}
            ctx.checkpoint()
        trace = trace_path(name)
        if trace is None:
            t["timeline"] = {"skipped": f"{name}.json.gz is neither in the bundle nor in ../shared"}
            continue
        p = ctx.run([ctx.replay, "predict", "--trace", trace, "--isolated",
                     os.path.join(out, "isolated.json"), "--json"], 120)
        try:
            import json
            pred = json.loads(p["stdout"])
            t["timeline"] = {
                "predicted_us": pred["predicted_us"], "measured_us": pred["measured_us"],
                "error_percent": pred["error_percent"],
                "self_check_error_percent": pred["self_check"]["error_percent"],
                "kernel_sum_us": pred["self_check"]["kernel_sum_us"],
            }
            write_json_atomic(os.path.join(out, "predict.json"), pred)
        except (ValueError, KeyError):
            t["timeline"] = {"command": record(p)}
        if ctx.device.startswith("cuda") and not ctx.quick:
            # The step re-run in order on the device (issue 31); on a CPU the H100 shapes take
            # seconds a run, more than a quick slice has.
            t["sequence"] = run_sequence(ctx, trace, sigs, out + "-sequence", min(10.0, ctx.stage_left() / 4))
    # A trace recorded without shapes, completed from its Execution Trace, its iteration re-run
    # with the model's data flow (issue 51): a few seconds on a GPU, 5-10 on a 2-core CPU.
    if ctx.stage_left() >= ET_PAIR_SECONDS:
        seconds = 1.0 if ctx.quick else min(5.0, ctx.stage_left() / 4)
        entry["et_pair"] = run_et_pair(ctx, os.path.join(ctx.work, "linear-et"), seconds)
    else:
        entry["et_pair"] = {"skipped": f"{ctx.stage_left():.0f} s left of the slice, under the "
                                       f"{ET_PAIR_SECONDS} s it needs"}


# ----------------------------------------------------------------------------------------------
# scan
# ----------------------------------------------------------------------------------------------

def scan_summary(csv_path):
    """Per backend and phase: cases by status, and the median time of the ok ones (ms)."""
    out = {}
    if not os.path.exists(csv_path):
        return out
    with open(csv_path, newline="") as f:
        for row in csv.DictReader(f):
            key = f"{row['backend']}/{row['semiring']}/{row['phase']}"
            item = out.setdefault(key, {"status": {}, "times_ms": []})
            item["status"][row["status"]] = item["status"].get(row["status"], 0) + 1
            # The seed's status words since issue 29 (`success`); `ok` in older files.
            if row["status"] in ("success", "ok") and row["time_ms_median"]:
                item["times_ms"].append(float(row["time_ms_median"]))
    for item in out.values():
        times = sorted(item.pop("times_ms"))
        item["median_time_ms"] = times[len(times) // 2] if times else None
    return out


# The scan grids, smallest first: (T, K, C). The stage takes the largest whose cases fit its
# slice; each case is checked against the float64 reference before it is timed. --quick takes
# QUICK_SCAN_GRID.
QUICK_SCAN_GRID = ("32,64", "4", "3,6")
SCAN_GRIDS = [
    ("64,128", "4,8", "3,6"),
    ("128,256", "4,8,12", "3,6"),
    ("128,256,512", "4,8,12,16", "3,6,9"),
    ("128,256,512,1024", "4,8,12,16,20,24", "3,6,9,12"),
]


def scan_grid(seconds, semirings, case_s, on_gpu):
    """The largest grid of SCAN_GRIDS whose cases (2 backends x 2 phases x semirings) fit in
    `seconds` at `case_s` each; the CPU's torch baseline is slow on large cases (tens of ms a
    call at T=128), so on the CPU only the two smallest are candidates."""
    chosen = QUICK_SCAN_GRID
    for grid in SCAN_GRIDS if on_gpu else SCAN_GRIDS[:2]:
        configs = 1
        for values in grid:
            configs *= len(values.split(","))
        if configs * 2 * 2 * semirings * case_s <= seconds:
            chosen = grid
    return chosen


def stage_scan(ctx, entry):
    """replay bench scan: replay's CUDA kernel against the libtorch baseline (cuda,torch) on a
    GPU, the Rust kernel against libtorch (cpu,torch) on the CPU, forward and both, on the
    largest grid that fits the slice, every case checked against float64 first."""
    on_gpu = ctx.device.startswith("cuda")
    backends = "cuda,torch" if on_gpu else "cpu,torch"
    semirings = "Log,Max" if ctx.quick else "Log,Max,Entropy"
    per_case = 0.05 if ctx.quick else 0.1
    if ctx.quick:
        t, k, c = QUICK_SCAN_GRID
    else:
        # A case: its warm-up, the check (forward and backward against float64) and the
        # samples; the CPU's torch cases take their 5 samples whatever the budget.
        case_s = per_case + (0.1 if on_gpu else 0.4)
        t, k, c = scan_grid(ctx.stage_left() * 0.7, len(semirings.split(",")), case_s, on_gpu)
    entry.update({"backends": backends, "grid": {"T": t, "K": k, "C": c, "semirings": semirings}})
    out = os.path.join(ctx.work, "scan")
    try:
        r = ctx.run([ctx.replay, "bench", "scan", "--device", ctx.device, "--backends", backends,
                     "--T", t, "--K", k, "--C", c, "--phases", "forward,both", "--semirings", semirings,
                     "--check-limit", str(1 << 40), "--max-time-per-case", str(per_case),
                     "--repeats", "3" if ctx.quick else "5",
                     "--output-dir", out, "--quiet"], 570)
        entry["command"] = record(r)
    finally:
        # The rows written before a cut are what the stage finished.
        entry["cases"] = scan_summary(os.path.join(out, "benchmark_full.csv"))


# ----------------------------------------------------------------------------------------------
# quant
# ----------------------------------------------------------------------------------------------

QUANT_RECIPES = ["baseline", "int8wo", "int8dq", "int4wo-128", "int4wo-128-hqq", "float8wo",
                 "float8dq-tensor", "float8dq-row"]


def quant_config(device, small, out, llama):
    """The quant stage's YAML: every recipe replay implements (and one it does not, whose row
    must say not_implemented) on a decode-sized and a prefill-sized bfloat16 Linear (1024-wide
    when `small`: --quick, and the CPU, where 4096-wide int4 recipes take seconds a call); the
    seed's LLaMa-2 70B shapes on a GPU when the slice has room."""
    shapes = [[32, 1024, 1024], [256, 1024, 1024]] if small else [[32, 4096, 4096], [4096, 4096, 4096]]
    generators = [{"name": "custom", "shapes": shapes}]
    if llama:
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


def stage_quant(ctx, entry):
    """replay bench quant on the device: every recipe as libtorch ops (on a GPU the CUDA
    kernels: _weight_int4pack_mm, _int_mm, _scaled_mm with row scales), each checked against
    its dequantize-then-matmul reference before it is timed; a row with status error fails the
    stage. Its rows go into summary.json (no archive)."""
    out = os.path.join(ctx.work, "quant")
    config = os.path.join(ctx.work, "quant.yml")
    on_gpu = ctx.device.startswith("cuda")
    llama = on_gpu and not ctx.quick and ctx.slice_s >= 60
    # JSON is YAML: no YAML writer needed on the GPU machine.
    write_json_atomic(config, quant_config(ctx.device, ctx.quick or not on_gpu, out, llama))
    runs = "5" if ctx.quick else ("100" if on_gpu else "10")
    entry["llama_shapes"] = llama
    try:
        r = ctx.run([ctx.replay, "bench", "quant", "--config", config, "--quiet", "--runs", runs], 570)
        entry["command"] = record(r)
    finally:
        found = sorted(f for f in os.listdir(out) if f.startswith("results_")) if os.path.isdir(out) else []
        rows = quant_summary(os.path.join(out, found[-1])) if found else []
        entry["rows"] = rows
        entry["statuses"] = {s: sum(1 for x in rows if x["status"] == s) for s in {x["status"] for x in rows}}
    wrong = [f"{x['quantization']} ({x['m']}, {x['k']}, {x['n']}): {x['error_msg']}"
             for x in rows if x["status"] == "error"]
    if wrong:
        entry["error"] = f"{len(wrong)} row(s) with status error: " + "; ".join(wrong)[:2000]
    elif not rows:
        entry["error"] = "replay bench quant wrote no rows"


# ----------------------------------------------------------------------------------------------
# mhc
# ----------------------------------------------------------------------------------------------

def mhc_rows(csv_path):
    """benchmark_results.csv of replay bench mhc as a list of dicts (empty when missing)."""
    if not os.path.exists(csv_path):
        return []
    with open(csv_path, newline="") as f:
        return [{k: row.get(k) for k in ("Device", "BatchSize", "Dtype", "Impl", "Case", "Status", "Time(ms)",
                                         "BW(GB/s)", "Time_min(ms)", "Time_max(ms)", "Note")}
                for row in csv.DictReader(f)]


MHC_BATCH_SIZES = (1, 16)


def stage_mhc(ctx, entry):
    """replay bench mhc: on a GPU --device cuda (torch and the fused CUDA Sinkhorn) and the
    offload simulation (--device cpu with the GPU present: pinned copies timed by CUDA events,
    stages 1-3 on the host) at two batch sizes, T=1024; on the CPU the --quick size. Every
    fused stage is checked against torch's before it is timed (a wrong result is an error row)."""
    on_gpu = ctx.device.startswith("cuda")
    # --quick is B=2 T=256 D=1024 and is refused beside --bs: with a GPU the batch sizes are
    # swept, so the quick size is spelled out.
    if not on_gpu:
        size = ["--quick"]
    elif ctx.quick:
        size = ["--seq", "256", "--dim", "1024"]
    else:
        size = ["--seq", "1024"]
    timing = ["--warmup", "1", "--iters", "3"]
    out = os.path.join(ctx.work, "mhc")
    entry["commands"] = []
    if on_gpu:
        plan = [(device, bs) for bs in MHC_BATCH_SIZES for device in (ctx.device, "cpu")]
    else:
        plan = [("cpu", None)]
    try:
        for device, bs in plan:
            batch = ["--bs", str(bs)] if bs else []
            r = ctx.run([ctx.replay, "bench", "mhc", "--device", device, *size, *batch, *timing,
                         "--output-dir", out], 300)
            entry["commands"].append(record(r))
            entry["rows"] = mhc_rows(os.path.join(out, "benchmark_results.csv"))
            ctx.checkpoint()
    finally:
        entry["rows"] = mhc_rows(os.path.join(out, "benchmark_results.csv"))


# ----------------------------------------------------------------------------------------------
# calibrate
# ----------------------------------------------------------------------------------------------

def stage_calibrate(ctx, entry):
    """replay calibrate --quick on the device: its peaks and how they were found, matmul GFLOPS,
    memory bandwidth through libtorch and replay's own copy and triad kernels; bf16 and every
    fusion pattern too when the slice has room (not with --quick)."""
    out = os.path.join(ctx.work, "calibrate", "profile.json")
    cmd = [ctx.replay, "calibrate", "--device", ctx.device, "--quick", "--output", out, "--quiet"]
    if not ctx.quick and ctx.device.startswith("cuda") and ctx.slice_s >= 60:
        cmd += ["--dtypes", "float32,bfloat16", "--fusion-patterns", "all"]
    try:
        r = ctx.run(cmd, 570)
        entry["command"] = record(r)
    finally:
        profile = load_json(out) or {}
        ops = profile.get("operation_profiles", {})
        entry.update({
            "peak_gflops": profile.get("theoretical_peak_gflops"),
            "peak_gflops_by_dtype": profile.get("theoretical_peak_gflops_by_dtype"),
            "peak_bandwidth_gbps": profile.get("theoretical_bandwidth_gbps"),
            "peak_sources": [profile.get("theoretical_peak_source"), profile.get("theoretical_bandwidth_source")],
            "gflops": {k: v.get("measured_gflops") for k, v in ops.items() if v.get("operation_type") == "matmul"},
            "bandwidth_gbps": {k: v.get("achieved_bandwidth_gbps") for k, v in ops.items() if v.get("memory_bound")},
            "fusion": {name: [(f.get("input_shape"), f.get("speedup_factor"), f.get("verdict")) for f in sizes]
                       for name, sizes in profile.get("fusion_profiles", {}).items()},
            "failures": profile.get("failures", {}),
        })


# ----------------------------------------------------------------------------------------------
# cpu
# ----------------------------------------------------------------------------------------------

def stage_cpu(ctx, entry):
    """On the CPU at --cpu-threads: scripts/bench_isolated.py (run-to-run noise of isolated) and
    scripts/bench_accuracy.py (bloom-tiny; bloom-560m too when three repeats fit what is left),
    each sized to what is left."""
    import sys
    py = sys.executable
    threads = str(ctx.cpu_threads)
    entry.update({"threads": ctx.cpu_threads, "cores": os.cpu_count()})
    noise = os.path.join(ctx.work, "bench_isolated.json")
    # Three isolated runs of the H100 signature files (16 and 18 signatures) in 40 % of the
    # slice; on a short slice one round each (the H100 shapes take tens of ms a call here).
    budget = per_kernel_budget(ctx.stage_left() * 0.4 / 3, 18, floor=0.01)
    args = ["--budget", str(budget)] + (["--rounds", "1"] if ctx.quick or ctx.slice_s < 240 else [])
    r = ctx.run([py, os.path.join(ROOT, "scripts/bench_isolated.py"), "--replay", ctx.replay,
                 "--threads", threads, "--out", noise, *args], 420)
    entry["isolated_noise"] = {"command": record(r), "result": load_json(noise)}
    ctx.checkpoint()
    # bloom-tiny first (seconds), then bloom-560m when three repeats of it fit what is left:
    # one repeat costs what the compare stage's bloom-560m case took on this CPU, or an
    # assumed minute when that ran on a GPU.
    entry["accuracy"] = accuracy_run(ctx, entry, "bloom-tiny", ["--runs", "10", "--max-time-per-kernel", "0.02"])
    ctx.checkpoint()
    if ctx.quick:
        return
    estimate = ctx.notes.get("compare_cpu_s", 60.0) if ctx.device == "cpu" else 60.0
    if find_model(ctx.models_dir, "bloom-560m") is None:
        entry["accuracy_bloom_560m"] = {"skipped": "bloom-560m was not exported in this run"}
    elif ctx.stage_left() < 3 * 1.25 * estimate + 5:
        entry["accuracy_bloom_560m"] = {"skipped": f"{ctx.stage_left():.0f} s left; three repeats "
                                                   f"need about {3 * 1.25 * estimate:.0f} s"}
    else:
        entry["accuracy_bloom_560m"] = accuracy_run(ctx, entry, "bloom-560m",
                                                    ["--runs", "30", "--max-time-per-kernel", "0.1"])


def accuracy_run(ctx, entry, name, timing):
    """scripts/bench_accuracy.py on one model at seq-len 5, three repeats (one with --quick)."""
    import sys
    out = os.path.join(ctx.work, f"bench_accuracy_{name}.json")
    # bench_accuracy reads its models from one folder: a link to wherever the model is.
    links = tempfile.mkdtemp(prefix="gpu-check-models-")
    try:
        path = ctx.model(name, "float32", entry)
        if path is None:
            return {"error": f"no {name} model"}
        os.symlink(os.path.abspath(path), os.path.join(links, model_file(name, "float32")))
        r = ctx.run([sys.executable, os.path.join(ROOT, "scripts/bench_accuracy.py"), "--replay", ctx.replay,
                     "--models-dir", links, "--models", name, "--repeats", "1" if ctx.quick else "3",
                     "--seq-lens", "5", "--threads", str(ctx.cpu_threads), "--out", out, *timing], 480)
        return {"command": record(r), "result": load_json(out)}
    finally:
        shutil.rmtree(links, ignore_errors=True)


STAGE_FUNCTIONS = {"selftest": stage_selftest, "truth": stage_truth, "compare": stage_compare, "compiled": stage_compiled,
                   "scan": stage_scan, "quant": stage_quant, "mhc": stage_mhc,
                   "calibrate": stage_calibrate, "cpu": stage_cpu}
