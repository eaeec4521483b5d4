"""The GPU check's compare stage: the host's costs on the machine first, then `replay compare`
of the zoo of ../shared/gpu-truth/ with them, as many configurations as the slice has room for,
every configuration's folder kept in the stage's archive (issue 50: every loan grows the truth).
Used by scripts/gpu_check_stages.py."""

import gzip
import os
import shutil
import time

from gpu_check_runner import find_model, load_json, per_kernel_budget, record, signed_error

# ----------------------------------------------------------------------------------------------

def compare_summary(report):
    p = report.get("predictions", {})
    out = {
        "measured_us": report.get("full_model_inference_us"),
        "measured_p10_us": (report.get("full_model") or {}).get("p10_us"),
        "measured_p90_us": (report.get("full_model") or {}).get("p90_us"),
        # replay's signed error (prediction - measured) / measured; `error_percent` in reports
        # written before issue 29.
        "sum_error_percent": signed_error(p.get("sum") or {}),
        "timeline_error_percent": signed_error(p.get("timeline") or {}),
        "sequence_error_percent": signed_error(p.get("sequence") or {}),
        # Issue 50: the host model (host's costs measured here, without the profiler) and the
        # prediction compare names by rule before measuring.
        "host_model_us": (p.get("host_model") or {}).get("predicted_us"),
        "host_model_error_percent": signed_error(p.get("host_model") or {}),
        "chosen": p.get("chosen"),
        "chosen_inside_p10_p90": p.get("chosen_inside_p10_p90"),
        "best": p.get("best"),
        "coverage": (report.get("coverage") or {}).get("replayed_share_of_trace_time"),
    }
    split = report.get("host_device")
    if split:
        out["host_device"] = {k: split.get(k) for k in ("host_us", "device_us", "bound", "host_times")}
    energy = report.get("energy")
    if energy:
        out["energy"] = {k: energy.get(k) for k in ("predicted_joules", "measured_joules", "error_percent", "method")}
    return out


def compare_cases(quick):
    """(key, model, dtype, input arguments, signatures expected), in the order of what each
    teaches: the zoo of ../shared/gpu-truth/ (issue 50: every loan grows the truth). The first
    always runs, each later one only when the slice has room for it."""
    if quick:
        return [("bloom-tiny-float32-seq5", "bloom-tiny", "float32", ["--seq-len", "5"], 20)]
    return [
        ("bloom-560m-float32-seq5", "bloom-560m", "float32", ["--seq-len", "5"], 40),
        ("bloom-560m-bfloat16-seq128", "bloom-560m", "bfloat16", ["--seq-len", "128"], 40),
        ("gpt2-small-seq128", "gpt2-small", "float32", ["--seq-len", "128"], 40),
        ("bert-base-seq128", "bert-base", "float32", ["--seq-len", "128"], 40),
        ("resnet50-b8", "resnet50", "float32", ["--input", "float32[8,3,224,224]"], 60),
        ("t5-small-seq16", "t5-small", "float32", ["--seq-len", "16"], 60),
        ("gpt2-small-seq5", "gpt2-small", "float32", ["--seq-len", "5"], 40),
        ("resnet50-b1", "resnet50", "float32", ["--input", "float32[1,3,224,224]"], 60),
    ]


# The host section's costs the compare stage's summary keeps (microseconds; None: not measured,
# as the GPU-only ones on a CPU).
HOST_FIELDS = ("dispatch_us_per_op", "interpreter_us_per_op", "launch_us", "launch_op_us", "sync_us",
               "copy_pinned_us", "copy_pageable_us", "profiler_us_per_cpu_event",
               "profiler_us_per_runtime_event", "profiler_us_per_session")


def measure_host(ctx, entry):
    """`replay calibrate --host-only` on the stage's device, before anything else of the stage:
    the host's costs on this machine, measured without the profiler (issue 50). The profile is
    kept as host/host.json in the stage's archive, its costs in the entry. A few seconds (2-4 on
    a 2-core CPU, the process's CUDA and profiler start-up on top on a GPU): at most a quarter
    of the slice, and not at all with less than 20 s left."""
    left = ctx.stage_left()
    if left < 20.0:
        entry["host"] = {"skipped": f"{left:.0f} s left in the slice; the host section needs 20"}
        return
    share = min(30.0, left * 0.25)
    out = os.path.join(ctx.work, "host", "host.json")
    r = ctx.run([ctx.replay, "calibrate", "--host-only", "--device", ctx.device, "--quiet",
                 "--output", out], min(60.0, share))
    profile = load_json(out) or {}
    host = profile.get("host") or {}
    entry["host"] = {"command": record(r), "file": "host/host.json",
                     "machine": host.get("machine"), "source": host.get("source"),
                     **{k: host.get(k) for k in HOST_FIELDS},
                     "ops_us": host.get("ops_us"), "failures": profile.get("failures", {})}
    ctx.checkpoint()


def stage_compare(ctx, entry):
    """The host section first (`measure_host`), then replay compare of the zoo in the order of
    `compare_cases` while the slice has room: the first case with --energy nvml on a GPU, the
    others without (quick: bloom-tiny)."""
    entry["device"] = ctx.device
    measure_host(ctx, entry)
    entry["runs"] = {}
    # NVML's counter updates every ~10-20 ms: the default windows of 100 update periods cost
    # about 4 s per signature (97 s of bloom-560m's 22 on the H200, 2026-11-26, which cut the
    # stage); 10 periods keep the energy figure and fit the slice.
    energy = ["--energy", "nvml", "--energy-min-periods", "10"] if ctx.device.startswith("cuda") else []
    if not energy:
        entry["energy"] = "skipped: NVML measures a GPU; the CPU run has no energy probe here"
    # --quick pins the threads (the tests compare runs); the full run on a CPU uses every core.
    threads = ["--threads", str(ctx.cpu_threads)] if ctx.device == "cpu" and ctx.quick else []
    first_s = None
    # Seconds of the slowest case run without energy: what a later case is sized by. On the H200
    # of 2026-11-30 the first case took 99 s with NVML's energy (its counter updates every 0.1 s
    # there, so 10 periods are a second per signature) and each later one 18-29 s without.
    plain_s = None
    for i, (key, model_name, dtype, inputs, signatures) in enumerate(compare_cases(ctx.quick)):
        if first_s is not None:
            # A later case costs about what the first did on a GPU, less the energy measurement
            # only the first has (a third of it when no case without energy has run yet), on a
            # CPU several times that (bfloat16 matmuls there are slow), plus its export.
            if not ctx.device.startswith("cuda"):
                need = first_s * 4.0
            else:
                need = 1.5 * (plain_s if plain_s is not None else (first_s / 3.0 if energy else first_s))
            if find_model(ctx.models_dir, model_name, dtype) is None and (model_name, dtype) not in ctx.exports:
                need += 30.0
            if ctx.stage_left() < need:
                entry["runs"][key] = {"skipped": f"{ctx.stage_left():.0f} s left in the slice; it needs about "
                                                 f"{need:.0f} s (the first case took {first_s:.0f} s"
                                                 + (f", the slowest without energy {plain_s:.0f} s)" if plain_s else ")")}
                continue
        started = time.monotonic()
        model = ctx.model(model_name, dtype, entry["runs"].setdefault(key, {}))
        if model is None:
            continue
        left = ctx.stage_left()
        # Isolated replay gets half of what is left, the capture and the full-model runs the rest.
        timing = ["--max-time-per-kernel", str(per_kernel_budget(left * 0.5, signatures, ceiling=0.25))]
        if ctx.quick or ctx.device == "cpu":
            # bloom-560m takes 0.1-0.8 s a forward pass on a 2-core CPU.
            timing += ["--warmup", "3", "--runs", "10", "--rounds", "1"]
        else:
            timing += ["--warmup", "10", "--runs", "100"]
        # No --host-profile: compare measures the host section itself, in the process that
        # measures the truth, as `replay compare --model` does for a user. On the H200 of
        # 2026-11-30 four processes a few minutes apart measured dispatch 0.47-1.12 µs an op and
        # the interpreter 1.07-2.78 µs (host-later-calls/ beside that loan's folders), and this
        # CPU's pinned runs split the same way between processes while agreeing within one: a
        # host section from another process may belong to another regime than the truth. The
        # stage's own measurement (host/host.json) stays beside it for comparison.
        out = os.path.join(ctx.work, key)
        r = ctx.run([ctx.replay, "compare", "--model", model, "--device", ctx.device, *inputs,
                     "--quiet", "--output-dir", out, *timing, *(energy if i == 0 else []), *threads],
                    540)
        report = load_json(os.path.join(out, "comparison_report.json"))
        run_entry = entry["runs"][key]
        run_entry.update(compare_summary(report) if report else {})
        # compare writes the host section alone (calibrate writes it as a profile's "host").
        own = load_json(os.path.join(out, "host.json")) or {}
        own = own.get("host") or own
        if own:
            # The host section compare measured in its own process, beside the stage's.
            run_entry["host_in_process"] = {k: own.get(k) for k in HOST_FIELDS[:5]}
        run_entry["command"] = record(r)
        keep_small(out)
        ctx.checkpoint()
        took = time.monotonic() - started
        if i > 0 or not energy:
            plain_s = took if plain_s is None else max(plain_s, took)
        if i == 0:
            first_s = took
            if ctx.device == "cpu" and report:
                ctx.notes["compare_cpu_s"] = first_s


def keep_small(folder):
    """Gzips a compare folder's trace and sequence (the archive brings every configuration's
    folder back: the truth grows with every loan)."""
    for name in ("trace.json", "sequence.json"):
        path = os.path.join(folder, name)
        if os.path.exists(path):
            with open(path, "rb") as src, gzip.open(path + ".gz", "wb") as dst:
                shutil.copyfileobj(src, dst)
            os.remove(path)
