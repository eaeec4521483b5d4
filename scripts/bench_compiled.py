#!/usr/bin/env python3
"""Issue 30's goals for compiled models on the CPU, as a benchmark: `make bench-compiled`.

  bench_compiled.py [--models gpt2-small bert-base t5-small resnet50 bloom-560m] [--repeats 3]
                    [--seq-len 5] [--runs 50] [--warmup 10] [--max-time 0.5] [--rounds 5]
                    [--threads N] [--workdir results/compiled] [--out results/bench_compiled.json]

Text models run at --seq-len tokens (batch 1), image models on one 224x224 image.

For each model, --repeats times, side by side in the same run:

  - `replay compare --compile --zoo M --device cpu`: the zoo model compiled with torch.compile
    (mode default), its generated and extern kernels replayed alone, the compiled model timed
    whole in the capture's Python process (half the runs before the isolated replay, half in a
    second process after it);
  - `replay compare --model M.pt --device cpu`: the same model eager, as TorchScript
    (`replay export`, once per model), timed by replay between the isolated rounds.

Each comparison's measured median with p10..p90, both predictions with their errors, the best
one, the share of the trace's time replayed and the compiled step's unseen share are kept, with
each side's spread over the repeats. The goals, checked on every repeat of the compiled side:
at least 99 % of the step's time replayed (the replayed share of the trace's time, less the
share no recorded op covers, plus that share again when the capture measured the compiled
wrapper without the profiler: inductor_wrapper.py), and the best prediction within 5 % of the measured time.

The JSON is rewritten after every comparison, and a comparison that fails is kept with its error
(the command and the end of its stderr) while the run goes on.
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
REPLAYED_GOAL = 0.99
ERROR_GOAL_PERCENT = 5.0


ZOO = ["gpt2-small", "bert-base", "t5-small", "resnet50", "bloom-560m"]
IMAGE_MODELS = {"resnet50": 224, "resnet-tiny": 32}


class Failed(Exception):
    """A command of the benchmark that exited non-zero."""


def run(cmd):
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise Failed(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr[-4000:]}")
    return seconds


def size_args(model, seq_len):
    """The input of one comparison: --seq-len tokens, or one image for an image model."""
    if model in IMAGE_MODELS:
        s = IMAGE_MODELS[model]
        return ["--input", f"float32[1,3,{s},{s}]"]
    return ["--seq-len", str(seq_len)]


def compare(replay, model_args, out, args):
    cmd = [replay, "compare", *model_args, "--device", "cpu", "--runs", str(args.runs),
           "--warmup", str(args.warmup), "--max-time", str(args.max_time), "--rounds", str(args.rounds),
           "--output-dir", out, "--quiet"]
    if args.threads:
        cmd += ["--threads", str(args.threads)]
    seconds = run(cmd)
    with open(os.path.join(out, "comparison_report.json")) as f:
        report = json.load(f)
    return result(report, seconds)


def result(report, seconds):
    """What one comparison contributes: measured, predictions, best error, coverage."""
    full, p, cov = report["full_model"], report["predictions"], report["coverage"]
    best = p[p["best"]] if p.get(p["best"]) else p["sum"]
    unseen = cov.get("unseen_share_of_step") or 0.0
    replayed = cov["replayed_share_of_trace_time"]
    # The step's share replay measured: the replayed ops', and the wrapper between them when
    # the capture timed it without the profiler (reports before it lack the key).
    accounted = cov.get("accounted_share_of_step")
    if accounted is None:
        accounted = replayed * (1.0 - unseen)
    return {
        "measured_us": report["full_model_inference_us"], "p10_us": full["p10_us"], "p90_us": full["p90_us"],
        "runs": full["runs"], "timed_in": full.get("timed_in", "replay (between the isolated rounds)"),
        "sum_us": p["sum"]["predicted_us"], "sum_error_percent": p["sum"]["prediction_error_percent"],
        "timeline_us": (p["timeline"] or {}).get("predicted_us"),
        "timeline_error_percent": (p["timeline"] or {}).get("prediction_error_percent"),
        "best": p["best"], "best_error_percent": best["prediction_error_percent"],
        "replayed_share_of_trace_time": replayed, "unseen_share_of_step": unseen,
        "replayed_share_of_step": accounted, "replayed_ops_share_of_step": replayed * (1.0 - unseen),
        "wrapper_us": cov.get("wrapper_us"),
        "tier4_share": (report["tier_breakdown"].get("tier4_generated") or {}).get("share", 0.0),
        "wall_seconds": round(seconds, 1),
    }


def spread(results, key):
    values = [r[key] for r in results if r.get(key) is not None]
    return {"min": min(values), "max": max(values)} if values else None


def side(results):
    return {"repeats": results, "spread": {k: spread(results, k) for k in
                                           ("measured_us", "best_error_percent", "replayed_share_of_step")}}


def goals_met(compiled, repeats):
    """Every one of the --repeats compiled comparisons ran and met both goals."""
    done = [r for r in compiled if "error" not in r]
    return len(done) == repeats and all(
        r["replayed_share_of_step"] >= REPLAYED_GOAL and abs(r["best_error_percent"]) <= ERROR_GOAL_PERCENT
        for r in done)


def attempt(fn):
    """fn()'s result, or the failure kept as {"error": ...} so the run goes on."""
    try:
        return fn()
    except Failed as e:
        print(f"  failed: {str(e).splitlines()[0]}", file=sys.stderr, flush=True)
        return {"error": str(e)}


def write(doc, out):
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, out)


def line(model, i, c, e):
    def one(r, extra):
        if "error" in r:
            return "failed"
        return f"{r['measured_us']:.1f} us, best {r['best']} {r['best_error_percent']:+.1f}%{extra(r)}"
    return (f"{model} repeat {i + 1}: compiled "
            + one(c, lambda r: f", {100 * r['replayed_share_of_step']:.1f}% of the step replayed")
            + "; eager " + one(e, lambda r: ""))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", nargs="+", default=ZOO)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--seq-len", type=int, default=5)
    p.add_argument("--runs", type=int, default=50)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--max-time", type=float, default=0.5)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--threads", type=int)
    p.add_argument("--workdir", default=os.path.join(ROOT, "results", "compiled"))
    p.add_argument("--out", default=os.path.join(ROOT, "results", "bench_compiled.json"))
    p.add_argument("--replay", default=os.path.join(ROOT, "target", "release", "replay"))
    p.add_argument("--update", action="store_true",
                   help="keep the other models of an existing --out file, replacing those run now "
                        "(each model keeps its own date and load)")
    args = p.parse_args(argv)
    if args.repeats < 1 or args.runs < 2 or args.seq_len < 1:
        print("bench_compiled: error: --repeats and --seq-len must be at least 1, --runs at least 2",
              file=sys.stderr)
        return 2
    # `make bench-compiled ARGS="--models a,b"` passes one comma-separated word.
    args.models = [m for word in args.models for m in word.split(",") if m]
    doc = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "load_average": os.getloadavg(),
           "device": "cpu", "protocol": {k: getattr(args, k) for k in ("repeats", "runs", "warmup", "max_time",
                                                                       "rounds", "threads", "seq_len")},
           "goals": {"replayed_share_of_step": REPLAYED_GOAL, "best_error_percent": ERROR_GOAL_PERCENT},
           "models": {}}
    if args.update and os.path.exists(args.out):
        with open(args.out) as f:
            earlier = json.load(f)
        for name, entry in earlier.get("models", {}).items():
            if name not in args.models:
                entry.setdefault("date", earlier.get("date"))
                entry.setdefault("load_average", earlier.get("load_average"))
                doc["models"][name] = entry
    for model in args.models:
        folder = os.path.join(args.workdir, model)
        os.makedirs(folder, exist_ok=True)
        torchscript = os.path.join(folder, f"{model}.pt")
        compiled, eager = [], []
        entry = doc["models"][model] = {"input": size_args(model, args.seq_len), "date": doc["date"],
                                        "load_average": os.getloadavg()}
        exported = attempt(lambda: run([args.replay, "export", "--model", model, "--out", torchscript]))
        for i in range(args.repeats):
            compiled.append(attempt(lambda: compare(
                args.replay, ["--compile", "--zoo", model, *size_args(model, args.seq_len)],
                os.path.join(folder, f"compiled-{i}"), args)))
            eager.append(exported if isinstance(exported, dict) else attempt(lambda: compare(
                args.replay, ["--model", torchscript, *size_args(model, args.seq_len)],
                os.path.join(folder, f"eager-{i}"), args)))
            entry.update({"compiled": side(compiled), "eager": side(eager),
                          "goals_met": goals_met(compiled, args.repeats)})
            write(doc, args.out)
            print(line(model, i, compiled[-1], eager[-1]), flush=True)
    print(f"wrote {args.out}")
    failed = sum("error" in r for m in doc["models"].values()
                 for r in m.get("compiled", {}).get("repeats", []) + m.get("eager", {}).get("repeats", []))
    if failed:
        print(f"bench_compiled: {failed} comparison(s) failed; their errors are in {args.out}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
