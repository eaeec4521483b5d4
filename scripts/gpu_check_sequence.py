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
