#!/usr/bin/env python3
"""Accuracy of `replay compare` across the model zoo on the CPU, written to
results/bench_accuracy.json.

For every model and input size (text models at sequence lengths 5 and 128, image models at
batch 1 and 8), runs the whole pipeline --repeats times at a fixed --threads and reports, per
run, the measured full-model median, the three predictions with their errors (the kernel sum,
the timeline, and the sequence: the timeline with the step re-run in order) and the coverage,
and per model and size the spread across the repeats: of the measured time and of each
prediction's error. Also, per run, the context effect op by op: each signature's in-context
time (the step re-run in order) against the trace's own mean, for ops above 50 us. Goals
(issues 12 and 31): the best prediction within 5 % for every model and size (bloom-tiny within
10 %), coverage 100 % (no unreplayed signature), and the in-context per-op median |error| within
5 %. Ends with a markdown table of the figures.

Usage: scripts/bench_accuracy.py [--repeats 3] [--threads 2] [--models a,b,...]
                                 [--runs 100] [--max-time-per-kernel 0.5] [--quick]

--quick checks that the benchmark works (tiny models, the small size only, one repeat, short
timings); its numbers mean nothing.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPLAY = os.path.join(ROOT, "target/release/replay")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zoo  # noqa: E402

ZOO = ["bloom-560m", "gpt2-small", "bert-base", "t5-small", "resnet50", "bloom-tiny"]
TINY = ["bloom-tiny", "gpt2-tiny", "bert-tiny", "t5-tiny", "resnet-tiny"]
TEXT_SEQ_LENS = (5, 128)
IMAGE_BATCHES = (1, 8)


def signed_error(prediction):
    """(predicted - measured) / measured x 100 of one prediction: `prediction_error_percent`
    (reports written before it was named so have `error_percent`, with the same sign)."""
    return prediction.get("prediction_error_percent", prediction.get("error_percent"))


def model_path(name, models_dir=os.path.join(ROOT, "models")):
    path = os.path.join(models_dir, name + ".pt")
    if not os.path.exists(path):
        subprocess.run([REPLAY, "export", "--model", name, "--out", path], check=True)
    return path


def sizes(name, quick, seq_lens=TEXT_SEQ_LENS):
    """(label, compare arguments) for each size the model is run at."""
    entry = zoo.MODELS[name]
    if entry.takes_images:
        s = entry.image_size
        return [(f"batch {b}", ["--input", f"float32[{b},3,{s},{s}]"])
                for b in IMAGE_BATCHES[:1 if quick else None]]
    return [(f"seq-len {n}", ["--seq-len", str(n)]) for n in seq_lens[:1 if quick else None]]


def one_run(model, size_args, args, tmp):
    cmd = [REPLAY, "compare", "--model", model, "--device", "cpu", *size_args,
           "--threads", str(args.threads), "--warmup", "10", "--runs", str(args.runs),
           "--max-time-per-kernel", str(args.max_time_per_kernel), "--quiet", "--output-dir", tmp]
    if args.cold:
        cmd += ["--cold"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(os.path.join(tmp, "comparison_report.json")) as f:
        r = json.load(f)
    p = r["predictions"]
    return {
        "inputs": r.get("inputs"),
        "measured_us": r["full_model_inference_us"],
        "measured_p10_us": r["full_model"]["p10_us"],
        "measured_p90_us": r["full_model"]["p90_us"],
        "sum_us": p["sum"]["predicted_us"], "sum_error_percent": signed_error(p["sum"]),
        "timeline_us": p["timeline"]["predicted_us"] if p["timeline"] else None,
        "timeline_error_percent": signed_error(p["timeline"]) if p["timeline"] else None,
        "sequence_us": p["sequence"]["predicted_us"] if p.get("sequence") else None,
        "sequence_error_percent": signed_error(p["sequence"]) if p.get("sequence") else None,
        "in_context_op_abs_errors_percent": in_context_errors(r),
        # The ops the per-op goal is judged on, with their three times (us): where a per-op
        # miss comes from (the trace is another process, profiled; see docs/benchmarks/accuracy.md).
        "in_context_ops": in_context_ops(r),
        # The profiled step the trace kept (capture's Python process) against the model
        # measured here: how fast the capturing process ran the same work.
        "trace_step_us": (r.get("trace_self_check") or {}).get("measured_us"),
        "host_model_us": p["host_model"]["predicted_us"] if p.get("host_model") else None,
        "host_model_error_percent": signed_error(p["host_model"]) if p.get("host_model") else None,
        "best": p["best"],
        # The prediction compare names by rule before measuring (issue 50): its error is the
        # honest figure; `best` is only known after.
        "chosen": p.get("chosen"),
        "chosen_error_percent": (signed_error(p[p["chosen"]]) if p.get("chosen") and p.get(p["chosen"])
                                 else None),
        "chosen_inside_p10_p90": p.get("chosen_inside_p10_p90"),
        "coverage": r["coverage"]["replayed_share_of_trace_time"],
        "unreplayed": [u["name"] for u in r["coverage"]["unreplayed"]],
        # Where a miss comes from: the signatures with the most predicted time, against the
        # trace's own time for them.
        "top_signatures": r["top_signatures"][:10],
    }


# Ops above this trace mean (us) enter the per-op in-context goal.
IN_CONTEXT_MIN_US = 50.0


def in_context_errors(report):
    """|in-context - trace mean| / trace mean x 100 of every signature of the run with a trace
    mean above IN_CONTEXT_MIN_US and an in-context time (the step re-run in order)."""
    return [100 * abs(s["in_context_us"] - s["trace_mean_us"]) / s["trace_mean_us"]
            for s in report.get("signature_times", [])
            if s.get("in_context_us") is not None and s["trace_mean_us"] >= IN_CONTEXT_MIN_US]


def in_context_ops(report):
    """The ops of the per-op goal: label, count, trace mean, isolated and in-context (us)."""
    return [{"label": s["label"], "count": s["count"], "trace_mean_us": s["trace_mean_us"],
             "isolated_us": s.get("isolated_us"), "in_context_us": s["in_context_us"]}
            for s in report.get("signature_times", [])
            if s.get("in_context_us") is not None and s["trace_mean_us"] >= IN_CONTEXT_MIN_US]


def scaled_op_errors(run):
    """The per-op errors with the two processes' speeds taken out: the trace was recorded by
    the capture's Python process, the in-context times by this one, and the same machine runs
    the same model 20-30 % apart between processes. Each op's trace mean is scaled by how much
    slower this process ran the whole model (its measured median) than the capture's process
    ran its profiled step (the trace's own step): |in-context - trace mean x s| / (trace mean x s)."""
    ops, trace_step = run.get("in_context_ops"), run.get("trace_step_us")
    if not ops or not trace_step:
        return []
    s = run["measured_us"] / trace_step
    return [100 * abs(o["in_context_us"] - o["trace_mean_us"] * s) / (o["trace_mean_us"] * s)
            for o in ops]


def best_abs_error(run):
    """The smallest |error| of the run's predictions."""
    return min(abs(e) for e in (run["sum_error_percent"], run["timeline_error_percent"],
                                run.get("sequence_error_percent")) if e is not None)


def spread(values):
    """Median, min, max and (max - min) of a list, or None for an empty one."""
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "range": max(values) - min(values)}


def summarise(runs):
    measured = [r["measured_us"] for r in runs]
    best = [best_abs_error(r) for r in runs]
    per_op = [statistics.median(r["in_context_op_abs_errors_percent"]) for r in runs
              if r.get("in_context_op_abs_errors_percent")]
    scaled = [statistics.median(e) for e in map(scaled_op_errors, runs) if e]
    coverage = min(r["coverage"] for r in runs)
    summary = {
        "runs": runs,
        "measured_us": spread(measured),
        "measured_run_to_run_spread_percent":
            100 * (max(measured) - min(measured)) / statistics.median(measured),
        "sum_error_percent": spread([r["sum_error_percent"] for r in runs]),
        "timeline_error_percent": spread([r["timeline_error_percent"] for r in runs]),
        "sequence_error_percent": spread([r.get("sequence_error_percent") for r in runs]),
        "in_context_op_median_abs_error_percent": spread(per_op),
        "in_context_op_median_abs_error_at_this_process_speed_percent": spread(scaled),
        "best_abs_error_percent": spread(best),
        "coverage_min": coverage,
        "unreplayed": sorted({n for r in runs for n in r["unreplayed"]}),
    }
    summary["meets_goal"] = summary["best_abs_error_percent"]["median"] <= 5.0 and coverage >= 1.0
    return summary


def goal_for(name):
    """The best prediction's goal (|error| %): bloom-tiny, whose step is mostly framework time,
    within 10 %, every other model within 5 %."""
    return 10.0 if name == "bloom-tiny" else 5.0


def fmt_error(s):
    """`median (min .. max)` of an error across the repeats."""
    if s is None:
        return "-"
    return f"{s['median']:+.1f} % ({s['min']:+.1f} .. {s['max']:+.1f})"


def fmt_abs(s):
    """`median (min .. max)` of an unsigned figure across the repeats."""
    if s is None:
        return "-"
    return f"{s['median']:.1f} % ({s['min']:.1f} .. {s['max']:.1f})"


def table(report):
    lines = ["| model | size | measured (run-to-run range) | kernel-sum error | timeline error "
             "| sequence error | in-context per-op median abs error (ops > 50 us) "
             "| the same, trace scaled to this process's speed | coverage |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, by_size in report["models"].items():
        for label, s in by_size.items():
            m = s["measured_us"]
            lines.append(
                f"| {name} | {label} | {m['median'] / 1000:.2f} ms ({s['measured_run_to_run_spread_percent']:.1f} %) "
                f"| {fmt_error(s['sum_error_percent'])} | {fmt_error(s['timeline_error_percent'])} "
                f"| {fmt_error(s.get('sequence_error_percent'))} "
                f"| {fmt_abs(s.get('in_context_op_median_abs_error_percent'))} "
                f"| {fmt_abs(s.get('in_context_op_median_abs_error_at_this_process_speed_percent'))} "
                f"| {100 * s['coverage_min']:.1f} % |")
    return "\n".join(lines)


def resummarise(path):
    """Summaries and goals of a saved report computed again from its runs, written back."""
    try:
        with open(path) as f:
            report = json.load(f)
        models = report["models"]
    except (OSError, ValueError, KeyError) as e:
        print(f"bench_accuracy: {path}: not a report of this script ({e})", file=sys.stderr)
        return 2
    for name, by_size in models.items():
        for label, old in by_size.items():
            s = summarise(old["runs"])
            s["meets_goal"] = s["best_abs_error_percent"]["median"] <= goal_for(name) and s["coverage_min"] >= 1.0
            by_size[label] = s
    with open(path, "w") as f:
        json.dump(report, f, indent=2)
    print(table(report))
    return 0


def main():
    global REPLAY
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2, help="libtorch intra-op threads, fixed for every run")
    ap.add_argument("--models", help=f"comma-separated (default: {','.join(ZOO)})")
    ap.add_argument("--runs", type=int, default=100, help="timed full-model runs per compare")
    ap.add_argument("--max-time-per-kernel", type=float, default=0.5)
    ap.add_argument("--cold", action="store_true", help="replay with caches flushed before every sample")
    ap.add_argument("--quick", action="store_true",
                    help="check that the benchmark works: tiny models, small size, 1 repeat, short timings")
    ap.add_argument("--out", default=os.path.join(ROOT, "results/bench_accuracy.json"))
    ap.add_argument("--replay", default=REPLAY, help="the replay binary (default: the release build)")
    ap.add_argument("--models-dir", default=os.path.join(ROOT, "models"),
                    help="where exported models are kept (exported when missing)")
    ap.add_argument("--seq-lens", default=",".join(map(str, TEXT_SEQ_LENS)),
                    help="sequence lengths of the text models (default: %(default)s)")
    ap.add_argument("--summarise", metavar="FILE",
                    help="re-summarise a report this script wrote (its runs kept) and print its table; "
                         "nothing is run")
    args = ap.parse_args()
    if args.summarise:
        return resummarise(args.summarise)
    REPLAY = args.replay
    try:
        seq_lens = tuple(int(n) for n in args.seq_lens.split(","))
    except ValueError:
        ap.error(f"--seq-lens takes comma-separated integers, got {args.seq_lens!r}")
    if args.quick:
        args.repeats, args.runs, args.max_time_per_kernel = 1, 10, 0.02
    names = args.models.split(",") if args.models else (TINY if args.quick else ZOO)
    unknown = [n for n in names if n not in zoo.MODELS]
    if unknown:
        print(f"bench_accuracy: unknown model(s) {', '.join(unknown)}; known: {', '.join(zoo.MODELS)}",
              file=sys.stderr)
        return 2
    report = {"threads": args.threads, "repeats": args.repeats, "runs": args.runs,
              "max_time_per_kernel_s": args.max_time_per_kernel, "cold": args.cold,
              "quick": args.quick,
              "goal": "best of the three predictions within 5 % (bloom-tiny 10 %), coverage 100 %, "
                      "in-context per-op median |error| within 5 % (ops above 50 us)",
              "models": {}}
    for name in names:
        model = model_path(name, args.models_dir)
        for label, size_args in sizes(name, args.quick, seq_lens):
            runs = []
            for _ in range(args.repeats):
                with tempfile.TemporaryDirectory() as tmp:
                    runs.append(one_run(model, size_args, args, tmp))
            s = summarise(runs)
            s["meets_goal"] = s["best_abs_error_percent"]["median"] <= goal_for(name) and s["coverage_min"] >= 1.0
            report["models"].setdefault(name, {})[label] = s
            print(f"{name} {label}: measured {[round(r['measured_us']) for r in runs]} us, "
                  f"sum errors {[round(r['sum_error_percent'], 1) for r in runs]} %, "
                  f"timeline errors {[round(r['timeline_error_percent'] or 0, 1) for r in runs]} %, "
                  f"sequence errors {[round(r['sequence_error_percent'] or 0, 1) for r in runs]} %, "
                  f"coverage {100 * s['coverage_min']:.1f} %{'' if s['meets_goal'] else '  (misses the goal)'}",
                  flush=True)
            os.makedirs(os.path.dirname(args.out), exist_ok=True)
            with open(args.out, "w") as f:  # after every size: a long run keeps what it has
                json.dump(report, f, indent=2)
    print(table(report))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
