#!/usr/bin/env python3
"""`make bench-quant-torchao`: replay's quantized Linear rows (`replay bench quant`) against
torchao's `quantize_` on the same Linear, on the CPU: output agreement (SQNR of our output
against torchao's) and the time ratio, both timed the seed's way (torch.utils.benchmark
Timer(num_threads=1), 100 warm-up calls, mean of 100).

Runs in a throw-away venv with torchao (scripts/bench_quant_vs_torchao.sh makes it); torchao is
never a dependency of replay.

How the two sides see the same model: replay seeds libtorch's generator with 0 and draws the
weight (torch.rand, float32, scaled to nn.Linear's bound) and then the input (torch.randn in the
model's dtype); scripts/quant_torch.py draws them the same way on the same torch, so its
weights are replay's. Our outputs come from quant_torch.py's QLinear, which runs the same aten
ops in the same order as src/suites/quant/quantized_linear.rs; that it is the same computation
is checked on every row: its SQNR against the high-precision output must equal the sqnr_db of
replay's CSV row. Our times are replay's CSV (the Rust binary), torchao's are timed here.
"""
import argparse
import csv
import glob
import json
import os
import subprocess
import sys
import tempfile
import warnings

import torch
from torch.utils.benchmark import Timer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import quant_torch  # noqa: E402

RECIPES = ["int8wo", "int8dq", "int4wo-64", "float8wo", "float8dq-tensor", "float8dq-row"]
SHAPES = [(16, 1024, 1024), (16, 4096, 1024), (256, 1024, 1024), (256, 4096, 1024)]


def torchao_config(recipe):
    from torchao.quantization import (Float8DynamicActivationFloat8WeightConfig,
                                      Float8WeightOnlyConfig,
                                      Int4WeightOnlyConfig,
                                      Int8DynamicActivationInt8WeightConfig,
                                      Int8WeightOnlyConfig, PerRow, PerTensor)
    if recipe == "int8wo":
        return Int8WeightOnlyConfig()
    if recipe == "int8dq":
        return Int8DynamicActivationInt8WeightConfig()
    if recipe.startswith("int4wo-"):
        return Int4WeightOnlyConfig(group_size=int(recipe.split("-")[1]))
    if recipe == "float8wo":
        return Float8WeightOnlyConfig()
    if recipe == "float8dq-tensor":
        return Float8DynamicActivationFloat8WeightConfig(granularity=PerTensor())
    if recipe == "float8dq-row":
        return Float8DynamicActivationFloat8WeightConfig(granularity=PerRow())
    raise ValueError(recipe)


def sqnr(ref, out):
    ref, out = ref.double(), out.double()
    noise = (ref - out).norm()
    return float("inf") if noise == 0 else float(20 * torch.log10(ref.norm() / noise))


def seed_time_ms(fn, calls):
    timer = Timer(stmt="fn()", globals={"fn": fn}, num_threads=1)
    timer.timeit(number=calls)
    return timer.timeit(number=calls).mean * 1e3


def run_replay(replay, calls):
    """One `replay bench quant` run over SHAPES x RECIPES; its rows by (recipe, m, k, n)."""
    with tempfile.TemporaryDirectory() as tmp:
        config = os.path.join(tmp, "anchor.yml")
        with open(config, "w") as f:
            f.write("benchmark_mode: inference\n")
            f.write(f"quantization_config_recipe_names: {json.dumps(RECIPES)}\n")
            f.write(f"output_dir: {tmp}\n")
            f.write("model_params:\n  matrix_shapes:\n    - name: custom\n")
            f.write(f"      shapes: {json.dumps([list(s) for s in SHAPES])}\n")
            f.write("  high_precision_dtype: torch.bfloat16\n  device: cpu\n  model_type: linear\n")
        subprocess.run([replay, "bench", "quant", "--config", config, "--runs", str(calls),
                        "--quiet"], check=True, stdout=subprocess.DEVNULL)
        [path] = glob.glob(os.path.join(tmp, "results_*.csv"))
        with open(path) as f:
            return {(r["quantization"], int(r["m"]), int(r["k"]), int(r["n"])): r
                    for r in csv.DictReader(f)}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--replay", required=True)
    p.add_argument("--runs", type=int, default=3, help="whole runs of both sides (spread)")
    p.add_argument("--calls", type=int, default=100, help="warm-up and timed calls")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    warnings.filterwarnings("ignore")
    import torchao
    from torchao.quantization import quantize_

    rows = {}
    for run in range(args.runs):
        print(f"== run {run + 1}/{args.runs}: replay bench quant", flush=True)
        ours = run_replay(args.replay, args.calls)
        print(f"== run {run + 1}/{args.runs}: torchao {torchao.__version__}", flush=True)
        for (m, k, n) in SHAPES:
            a = argparse.Namespace(model_type="linear", m=m, k=k, n=n)
            ws, x = quant_torch.weights_and_input(a, torch.bfloat16, torch.device("cpu"))
            w = ws[0]
            for recipe in RECIPES:
                key = (recipe, m, k, n)
                entry = rows.setdefault(key, {"recipe": recipe, "m": m, "k": k, "n": n,
                                              "replay_ms": [], "torchao_ms": [],
                                              "baseline_ms": []})
                r = ours.get(key)
                if r is None or r["status"] != "ok":
                    entry["replay_status"] = r["status"] if r else "missing"
                else:
                    entry["replay_ms"].append(float(r["quantized_inference_time_in_ms"]))
                    entry["baseline_ms"].append(float(r["baseline_inference_time_in_ms"]))
                    entry["replay_sqnr_db"] = float(r["sqnr_db"])
                with torch.no_grad():
                    hp = torch.nn.functional.linear(x, w)
                    mine = quant_torch.QLinear(recipe, w)(x)
                    entry["mirror_sqnr_db"] = round(sqnr(hp, mine), 2)
                    linear = torch.nn.Sequential(torch.nn.Linear(k, n, bias=False))
                    linear[0].weight = torch.nn.Parameter(w.clone(), requires_grad=False)
                    linear = linear.eval()
                    try:
                        quantize_(linear, torchao_config(recipe))
                        theirs = linear(x)
                    except Exception as e:  # torchao has no CPU path for this recipe
                        entry["torchao_status"] = (
                            f"unavailable on the CPU in torchao {torchao.__version__}: "
                            f"{type(e).__name__}: {str(e).splitlines()[0][:160]}")
                        continue
                    entry["torchao_status"] = "ok"
                    entry["torchao_sqnr_db"] = round(sqnr(hp, theirs), 2)
                    entry["ours_vs_torchao_sqnr_db"] = round(sqnr(theirs, mine), 2)
                    entry["torchao_ms"].append(seed_time_ms(lambda: linear(x), args.calls))

    results = []
    for entry in rows.values():
        ours, theirs = entry["replay_ms"], entry["torchao_ms"]
        if ours and theirs:
            ratios = [t / o for o, t in zip(ours, theirs)]
            entry["torchao_over_replay"] = {"min": min(ratios), "max": max(ratios),
                                            "median": sorted(ratios)[len(ratios) // 2]}
        if "replay_sqnr_db" in entry:
            # The mirror must be replay's computation: same SQNR against the same hp output.
            entry["mirror_matches_replay"] = abs(entry["replay_sqnr_db"]
                                                 - entry["mirror_sqnr_db"]) <= 0.02
        results.append(entry)
    report = {
        "what": "replay bench quant (Rust, libtorch ops) vs torchao quantize_ on one "
                "bfloat16 Linear(k, n, bias=False), CPU, 1 thread, mean of "
                f"{args.calls} calls after {args.calls} warm-ups, {args.runs} runs",
        "torch": torch.__version__,
        "torchao": torchao.__version__,
        "cpu": open("/proc/cpuinfo").read().split("model name")[1].split("\n")[0].strip(": ")
        if os.path.exists("/proc/cpuinfo") else "unknown",
        "rows": results,
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(report, f, indent=1)
    md = ["| recipe | shape (m, k, n) | replay ms | torchao ms | torchao/replay (min–max) | "
          "SQNR ours vs torchao (dB) | SQNR vs bf16: ours / torchao (dB) |",
          "|---|---|---|---|---|---|---|"]

    def fmt_ratio(r):
        return f"{r['min']:.2f}–{r['max']:.2f}x" if r else "-"

    def span(v):
        return f"{min(v):.3f}–{max(v):.3f}" if v else "-"

    for e in results:
        ratio = e.get("torchao_over_replay")
        md.append(
            f"| {e['recipe']} | ({e['m']}, {e['k']}, {e['n']}) | {span(e['replay_ms'])} | "
            f"{span(e['torchao_ms']) if e['torchao_ms'] else 'n/a'} | "
            f"{fmt_ratio(ratio)} | "
            f"{e.get('ours_vs_torchao_sqnr_db', '-')} | "
            f"{e.get('replay_sqnr_db', '-')} / {e.get('torchao_sqnr_db', 'n/a')} |")
    unavailable = sorted({(e["recipe"], e["torchao_status"]) for e in results
                          if e.get("torchao_status", "ok") != "ok"})
    for recipe, why in unavailable:
        md.append(f"\n{recipe}: {why}")
    with open(os.path.splitext(args.out)[0] + ".md", "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md))
    bad = [e for e in results if e.get("mirror_matches_replay") is False]
    if bad:
        print(f"bench_quant_vs_torchao: {len(bad)} rows where the Python mirror is not replay's "
              "computation", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
