"""The GPU check's re-run of a trace's step in order (`replay sequence`, issue 31) on the
device: the truth stage runs it on each H100 trace after the isolated replay. What the summary
keeps: the runs' spread, the entries by status, each op's in-context time against the trace's
own (the same distribution as the isolated rows), and the reasons of those that did not run."""
import os

from gpu_check_runner import load_json, record


def sequence_summary(seq):
    """A sequence.json, summarised: runs, statuses, per-op errors against the trace, failures."""
    if seq is None:
        return None
    entries = seq.get("entries", [])
    by_status = {}
    for e in entries:
        by_status[e["status"]] = by_status.get(e["status"], 0) + 1
    errors = sorted(abs(100.0 * (e["in_context"]["median_us"] - e["trace_us"]) / e["trace_us"])
                    for e in entries if e.get("in_context") and e.get("trace_us"))
    runs = seq.get("runs") or {}
    return {
        "device": seq.get("device"), "step": seq.get("step"), "ops": len(entries), "by_status": by_status,
        "runs": {k: runs.get(k) for k in ("samples", "median_us", "p10_us", "p90_us", "timer")},
        "step_ops_us": seq.get("step_ops_us"), "trace_ops_us": seq.get("trace_ops_us"),
        "unrebuilt_trace_us": seq.get("unrebuilt_trace_us"),
        "op_abs_error_percent": {"median": errors[len(errors) // 2], "max": errors[-1]} if errors else None,
        "not_run": [{k: e.get(k) for k in ("position", "name", "status", "reason")}
                    for e in entries if e["status"] != "ok"][:10],
    }


def run_sequence(ctx, trace, sigs, out, seconds):
    """`replay sequence` of `trace` (classified as `sigs`) on the check's device in `seconds`."""
    r = ctx.run([ctx.replay, "sequence", "--trace", trace, "--kernels", sigs, "--device", ctx.device,
                 "--max-time", str(max(1.0, seconds)), "--min-samples", "3", "--quiet",
                 "--output-dir", out], int(seconds) + 120)
    return {"command": record(r), "summary": sequence_summary(load_json(os.path.join(out, "sequence.json")))}


ET_PAIR = ("linear_kineto.json.gz", "linear_et.json.gz")


def et_pair_path(name):
    """A file of PARAM's linear Execution Trace pair: in the bundle, else in ../shared."""
    from gpu_check_runner import ROOT, bundle_dir
    for folder in (os.path.join(bundle_dir(), "traces", "et"), os.path.join(ROOT, "../shared/traces/et")):
        path = os.path.join(folder, name)
        if os.path.exists(path):
            return path
    return None


def run_et_pair(ctx, out, seconds):
    """PARAM's linear pair (a V100 training trace recorded without shapes, and its Execution
    Trace): classified with the ET (its ops take the ET's inputs), then the ET's iteration re-run
    on the check's device with the model's data flow (`replay sequence --execution-trace`).
    What the summary keeps: the signatures with shapes, every signature replayed alone (statuses
    and coverage), the re-run's statuses and runs, the flow counts and the memory plan against
    the measured peak."""
    kineto, et = (et_pair_path(n) for n in ET_PAIR)
    if kineto is None or et is None:
        return {"skipped": "the linear pair is neither in the bundle nor in ../shared/traces/et"}
    os.makedirs(out, exist_ok=True)
    sigs = os.path.join(out, "signatures.json")
    c = ctx.run([ctx.replay, "classify", "--trace", kineto, "--execution-trace", et, "--out", sigs], 120)
    file = load_json(sigs) or {}
    signatures = file.get("signatures", [])
    result = {"classify": record(c), "signatures": len(signatures),
              "with_shapes": sum(1 for s in signatures if s.get("inputs")),
              "execution_trace": (file.get("source") or {}).get("execution_trace")}
    # Every signature alone on the device: the GEMM shapes derived from the ET's inputs on the
    # device's BLAS, and the share of the trace's time replayed.
    iso_out = os.path.join(out, "isolated")
    i = ctx.run([ctx.replay, "isolated", "--kernels", sigs, "--device", ctx.device, "--quiet",
                 "--max-time", "0.02", "--rounds", "1", "--min-samples", "3", "--output-dir", iso_out], 120)
    isolated = load_json(os.path.join(iso_out, "isolated.json")) or {}
    statuses, replayed, total = {}, 0.0, 0.0
    for row in isolated.get("results", []):
        statuses[row["status"]] = statuses.get(row["status"], 0) + 1
        total += row.get("trace_total_us") or 0.0
        if row["status"] in ("ok", "included"):
            replayed += row.get("trace_total_us") or 0.0
    result["isolated"] = {"command": record(i), "by_status": statuses,
                          "replayed_share_of_trace_time": replayed / total if total else None}
    r = ctx.run([ctx.replay, "sequence", "--trace", kineto, "--execution-trace", et, "--device", ctx.device,
                 "--max-time", str(max(1.0, seconds)), "--min-samples", "3", "--quiet",
                 "--output-dir", out], int(seconds) + 120)
    seq = load_json(os.path.join(out, "sequence.json"))
    result["sequence"] = {"command": record(r), "summary": sequence_summary(seq)}
    if seq is not None:
        memory = seq.get("memory") or {}
        result["sequence"]["data_flow"] = seq.get("data_flow")
        result["sequence"]["flow"] = {k: v for k, v in (seq.get("flow") or {}).items() if k != "fallback_reasons"}
        result["sequence"]["memory"] = {k: memory.get(k) for k in (
            "planned_peak_bytes", "measured_peak_bytes", "budget_bytes", "sharing")}
    return result
