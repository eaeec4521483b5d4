"""The whole torch.compile'd model timed in the capture's Python process, with replay's
protocol (`replay full`'s): `warmup` untimed forward passes, then `runs` timed ones, each
pass timed alone under no_grad on the same input, the host's monotonic clock
(time.perf_counter_ns) on the CPU and a torch.cuda.Event pair, waited for, on CUDA.

The samples and the protocol go to `compiled_model_timing.json` beside the trace, in the
fields of `full_model_timing.json` (model_format "torch_compile"), so replay reads both with
one reader; replay recomputes the statistics from `samples_us` with its own definitions (the
ones written here are for a reader of the file alone).
"""
import json
import math
import os
import time

import torch

FILE = "compiled_model_timing.json"
# The second half of the runs, timed by `capture_trace.py --time-only` in a process of its own
# after replay's isolated replay, the model compiled again from the capture's Inductor cache.
AFTER_FILE = "compiled_model_timing_after.json"
FORMAT = "torch_compile"
TIMED_IN = "the capture's Python process"


def timing_path(out, after=False):
    """`compiled_model_timing.json` (or the later half's file) beside the trace file `out`."""
    return os.path.join(os.path.dirname(os.path.abspath(out)), AFTER_FILE if after else FILE)


def timer_name(dev):
    return "CUDA events (torch.cuda.Event)" if dev.type == "cuda" else "monotonic clock (time.perf_counter_ns)"


def time_passes(model, inputs, dev, warmup, runs):
    """`runs` per-pass times in microseconds after `warmup` untimed passes."""
    samples = []
    with torch.no_grad():
        for _ in range(warmup):
            model(*inputs)
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)
            for _ in range(runs):
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                model(*inputs)
                end.record()
                end.synchronize()
                samples.append(start.elapsed_time(end) * 1e3)  # ms -> us
        else:
            for _ in range(runs):
                t0 = time.perf_counter_ns()
                model(*inputs)
                samples.append((time.perf_counter_ns() - t0) / 1e3)
    return samples


def percentile(sorted_values, q):
    """Linear interpolation between closest ranks."""
    pos = q * (len(sorted_values) - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def timing_doc(samples, *, model, dev, mode, inputs, seq_len, batch, warmup, timed_in=TIMED_IN):
    """The file's content: full_model_timing.json's fields, and how the model was compiled."""
    s = sorted(samples)
    mean = sum(s) / len(s)
    std = math.sqrt(sum((x - mean) ** 2 for x in s) / (len(s) - 1)) if len(s) > 1 else 0.0
    return {
        "model": model, "device": str(dev), "seq_len": seq_len, "batch": batch, "inputs": inputs,
        "warmup": warmup, "runs": len(s), "threads": torch.get_num_threads(), "timer": timer_name(dev),
        "mean_us": mean, "median_us": percentile(s, 0.5), "min_us": s[0], "max_us": s[-1],
        "std_us": std, "p10_us": percentile(s, 0.1), "p90_us": percentile(s, 0.9), "rse_median": None,
        "samples_us": samples, "model_format": FORMAT, "compile_mode": mode, "timed_in": timed_in,
    }


def write(path, doc):
    """Written beside and renamed, so a reader never sees a partial file."""
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, path)


def summary(doc, path):
    where = "this process" if doc["timed_in"] == TIMED_IN else doc["timed_in"]
    return (f"timed the compiled model in {where}: median {doc['median_us']:.1f} us "
            f"(p10 {doc['p10_us']:.1f}, p90 {doc['p90_us']:.1f}) over {doc['runs']} runs after "
            f"{doc['warmup']} warm-ups, {doc['timer']}; {path}")
