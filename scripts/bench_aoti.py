#!/usr/bin/env python3
"""The goal "`full` of an AOTInductor package agrees with the same package timed from Python"
(issue 30), as a benchmark: `make bench-aoti`.

  bench_aoti.py [--models bloom-tiny gpt2-small] [--runs 50] [--warmup 10] [--rounds 3]
                [--threads N] [--workdir results/aoti] [--out results/bench_aoti.json] [--reuse]

For each model: `replay export --model M --format pt2 --aoti` (its wall time is the compile's),
then in each of --rounds interleaved rounds the same package timed

  - by `replay full --model M.pt2 --device cpu` (Rust, libtorch's AOTIModelPackageLoader, the
    measurement core's clock), and
  - from Python in this process with `torch._inductor.aoti_load_package` (same warm-ups and
    runs, `time.perf_counter_ns` around each call): the user-facing call `compiled(x)`, and
    `compiled.loader.run([x])`, the same libtorch call `full` makes, without the Python
    wrapper's pytree work;

on the same input (the package's metadata `replay_input`, seeded as replay seeds it). Writes
one JSON with every side's median, p10 and p90 over all rounds, each round's median, and
whether the sides agree: each median inside the other side's p10..p90.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)


def percentile(samples, q):
    """Linear interpolation between closest ranks (as replay's Stats)."""
    s = sorted(samples)
    pos = (len(s) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def summary(samples, round_medians):
    return {"median_us": statistics.median(samples), "p10_us": percentile(samples, 0.1),
            "p90_us": percentile(samples, 0.9), "runs": len(samples),
            "round_medians_us": round_medians}


def agree(a, b):
    """Each side's median lies within the other's p10..p90."""
    return (b["p10_us"] <= a["median_us"] <= b["p90_us"]) and (a["p10_us"] <= b["median_us"] <= a["p90_us"])


def export(replay, model, out):
    """`replay export --aoti` with an empty Inductor cache of its own, so that its wall time is
    a cold compile's (Inductor's default cache in /tmp is shared by every run on the machine)."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=cache)
        start = time.perf_counter()
        done = subprocess.run([replay, "export", "--model", model, "--format", "pt2", "--aoti",
                               "--device", "cpu", "--out", out], capture_output=True, text=True, env=env)
        seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"export of {model} failed:\n{done.stderr}")
    return seconds, done.stdout.strip()


def replay_full(replay, package, warmup, runs, threads):
    with tempfile.TemporaryDirectory() as out:
        cmd = [replay, "full", "--model", package, "--device", "cpu", "--warmup", str(warmup),
               "--runs", str(runs), "--output-dir", out, "--quiet"]
        if threads:
            cmd += ["--threads", str(threads)]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"replay full {package} failed:\n{done.stderr}")
        with open(os.path.join(out, "full_model_timing.json")) as f:
            return json.load(f)


def python_times(call, warmup, runs):
    import torch
    with torch.no_grad():
        for _ in range(warmup):
            call()
        samples = []
        for _ in range(runs):
            start = time.perf_counter_ns()
            call()
            samples.append((time.perf_counter_ns() - start) / 1e3)
    return samples


def bench_model(args, model):
    import torch
    from capture_trace import parse_input_spec

    package = os.path.join(args.workdir, f"{model}.pt2")
    if args.reuse and os.path.exists(package):
        compile_s, export_line = None, f"{package} (reused, not exported by this run)"
    else:
        compile_s, export_line = export(args.replay, model, package)
    compiled = torch._inductor.aoti_load_package(package)
    specs = [parse_input_spec(s) for s in compiled.get_metadata()["replay_input"].split()]
    # replay seeds libtorch's global generator with 0 and draws each input in turn
    # (InputSpec::make): the same draws here.
    torch.manual_seed(0)
    inputs = []
    for dtype, sizes, bounds in specs:
        if dtype == torch.bool:
            inputs.append(torch.rand(sizes) < 0.5)
        elif dtype.is_floating_point:
            inputs.append(torch.randn(sizes).to(dtype))
        else:
            lo, hi = bounds or (0, 2)
            inputs.append(torch.randint(lo, hi, sizes).to(dtype))
    sides = {"replay_full": [], "python_call": [], "python_loader_run": []}
    medians = {k: [] for k in sides}
    timer = None
    for _ in range(args.rounds):
        timing = replay_full(args.replay, package, args.warmup, args.runs, args.threads)
        timer = timing["timer"]
        sides["replay_full"] += timing["samples_us"]
        medians["replay_full"].append(timing["median_us"])
        for side, call in (("python_call", lambda: compiled(*inputs)),
                           ("python_loader_run", lambda: compiled.loader.run(inputs))):
            samples = python_times(call, args.warmup, args.runs)
            sides[side] += samples
            medians[side].append(statistics.median(samples))
    result = {side: summary(samples, medians[side]) for side, samples in sides.items()}
    out = {"model": model, "package": package, "export": export_line,
           "export_seconds": None if compile_s is None else round(compile_s, 1), "input": compiled.get_metadata()["replay_input"],
           "replay_timer": timer, **result,
           "agree_with_python_call": agree(result["replay_full"], result["python_call"]),
           "agree_with_python_loader_run": agree(result["replay_full"], result["python_loader_run"])}
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", nargs="+", default=["bloom-tiny", "gpt2-small"])
    p.add_argument("--runs", type=int, default=50)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--threads", type=int, help="libtorch threads on both sides (default: libtorch's choice)")
    p.add_argument("--workdir", default=os.path.join(ROOT, "results", "aoti"))
    p.add_argument("--out", default=os.path.join(ROOT, "results", "bench_aoti.json"))
    p.add_argument("--replay", default=os.path.join(ROOT, "target", "release", "replay"))
    p.add_argument("--reuse", action="store_true",
                   help="time the packages already in --workdir instead of exporting them again")
    args = p.parse_args(argv)
    if args.runs < 2 or args.rounds < 1 or args.warmup < 0:
        print("bench_aoti: error: --runs must be at least 2, --rounds at least 1", file=sys.stderr)
        return 2
    os.makedirs(args.workdir, exist_ok=True)
    import torch
    if args.threads:
        torch.set_num_threads(args.threads)
    report = {"benchmark": "aoti_full_vs_python", "device": "cpu", "torch": torch.__version__,
              "threads": torch.get_num_threads(), "runs": args.runs, "warmup": args.warmup,
              "rounds": args.rounds, "load": os.getloadavg(), "models": []}
    for model in args.models:
        row = bench_model(args, model)
        report["models"].append(row)
        print(f"{model}: export --aoti {row['export_seconds']} s; replay full median "
              f"{row['replay_full']['median_us']:.1f} us (p10 {row['replay_full']['p10_us']:.1f}, "
              f"p90 {row['replay_full']['p90_us']:.1f}); python compiled(x) "
              f"{row['python_call']['median_us']:.1f} (p10 {row['python_call']['p10_us']:.1f}, "
              f"p90 {row['python_call']['p90_us']:.1f}); python loader.run "
              f"{row['python_loader_run']['median_us']:.1f} (p10 {row['python_loader_run']['p10_us']:.1f}, "
              f"p90 {row['python_loader_run']['p90_us']:.1f}); agree: "
              f"{row['agree_with_python_call']}/{row['agree_with_python_loader_run']}", flush=True)
    report["load_after"] = os.getloadavg()
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(report, f, indent=1)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
