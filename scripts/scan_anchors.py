#!/usr/bin/env python3
"""Times what a PyTorch user would pick instead of `replay bench scan` (torch-struct and
flash-semicrf) on the CPU, on the very inputs of `replay bench scan`, and checks that their
log-partitions equal replay's. Run by scripts/bench_scan_vs_anchors.sh inside a throw-away
venv that has the anchors (they are never dependencies of replay).

For each (T, K, C) of the grid:
  - the inputs are the benchmark's: torch.manual_seed(42), then
    edge = torch.randn(B, T-1, K, C, C) (float32, CPU), saved as .npy for replay;
  - each anchor is timed as the seed times a backend: 1 warm-up, then --repeats runs, the
    median and the seed's quartiles (sorted[n//4], sorted[3n//4]); `forward` is the
    log-partition under torch.no_grad() (inference), `backward` is `.backward()` of the
    summed log-partition alone, after an untimed forward that built the graph;
  - replay's `cpu` and `torch` backends are timed by `replay scan --time` on the same .npy
    (the measurement core: warm-up, stopping rule, median), and replay's log Z is compared
    with each anchor's (relative 1e-4).

Anchors and their conventions (read from their source, 0.5 and 0.2.0):
  - torch-struct `SemiMarkov(LogSemiring).sum(edge)`: the seed's layout exactly (durations
    1..K-1 read slices 1..K-1, slice 0 unused); a log-depth scan of semiring matrix products
    over (K-1)C x (K-1)C matrices, whose broadcast product needs about
    2 * B * bin_N/2 * ((K-1)C)^3 * 4 bytes at its first level: configurations whose estimate
    exceeds --max-memory-gb are skipped, as the seed skips by estimate.
  - flash-semicrf `SemiMarkov(LogSemiring).logpartition(..., use_linear_scan=True)`: its
    streaming ring-buffer scan. It reads duration d from slice d-1 (durations 1..K), so it
    is given edge[:, :, 1:] (durations 1..K-1 of the seed); its binary-tree path (the default
    below K*C = 200) uses the seed's layout, and is timed too as `flash-semicrf-auto`
    (what `.sum(edge)` picks by default).
A measurement whose first (warm-up) call takes longer than --slow-s is reported from that
one call (status `slow`), so one huge configuration cannot hold the run for hours.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch


def parse_list(text):
    return [int(x) for x in text.split(",") if x.strip()]


def seed_quartiles(times):
    s = sorted(times)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2]), s[n // 4], s[(3 * n) // 4]


def time_phase(run_forward, edge, phase, repeats, slow_s):
    """Seed-style timing of one phase; returns a dict with ms figures and the log Z."""
    samples = []
    logz = None
    for i in range(repeats + 1):
        if phase == "forward":
            e = edge.clone()
            t0 = time.perf_counter()
            with torch.no_grad():
                v = run_forward(e)
            dt = time.perf_counter() - t0
            logz = v.detach().reshape(-1).double().tolist()
        else:
            e = edge.clone().requires_grad_(True)
            v = run_forward(e)
            loss = v.sum()
            t0 = time.perf_counter()
            loss.backward()
            dt = time.perf_counter() - t0
        if i == 0:
            if dt > slow_s:
                return {"status": "slow", "time_ms_median": dt * 1e3, "runs": 1, "logz": logz}
            continue
        samples.append(dt * 1e3)
    med, q1, q3 = seed_quartiles(samples)
    return {
        "status": "ok",
        "time_ms_median": med,
        "time_ms_iqr_low": q1,
        "time_ms_iqr_high": q3,
        "runs": len(samples),
        "logz": logz,
    }


def anchors():
    import flash_semicrf
    import torch_struct

    ts = torch_struct.SemiMarkov(torch_struct.LogSemiring)
    fs = flash_semicrf.SemiMarkov(flash_semicrf.semirings.LogSemiring)

    def torch_struct_fwd(e):
        return ts.sum(e)

    def flash_streaming_fwd(e):
        v, _, _ = fs.logpartition(e[:, :, 1:], use_linear_scan=True)
        return fs.semiring.unconvert(v)

    def flash_auto_fwd(e):
        return fs.sum(e)

    return [
        ("torch-struct", torch_struct_fwd, torch_struct.__name__, "0.5"),
        ("flash-semicrf", flash_streaming_fwd, flash_semicrf.__name__, flash_semicrf.__version__),
        ("flash-semicrf-auto", flash_auto_fwd, flash_semicrf.__name__, flash_semicrf.__version__),
    ]


def torch_struct_estimate_gb(B, T, K, C):
    n = max(T - 1, 1)
    bin_n = 1 << (n - 1).bit_length()
    m = (K - 1) * C
    return 2.0 * B * (bin_n / 2) * m**3 * 4 / 1e9


def run_replay(replay, npy, backend, phase):
    """`replay scan --time` on the .npy: replay's log Z and its median time."""
    cmd = [replay, "scan", "--edge", npy, "--semiring", "log", "--device", "cpu",
           "--backend", backend, "--time", "--phase", phase]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        return {"status": "error", "error": (out.stderr or out.stdout).strip()[-300:]}
    data = json.loads(out.stdout)
    timing = data.get("timing", {})
    return {
        "status": "ok",
        "time_ms_median": timing.get("median_ms"),
        "time_ms_iqr_low": timing.get("q1_ms"),
        "time_ms_iqr_high": timing.get("q3_ms"),
        "runs": timing.get("samples"),
        "logz": data.get("values"),
    }


def relative_error(a, b):
    return max(abs(x - y) / max(abs(y), 1e-12) for x, y in zip(a, b))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--replay", required=True, help="the replay executable")
    p.add_argument("--T", default="128,256,512,1024")
    p.add_argument("--K", default="4,8,12,16,20,24")
    p.add_argument("--C", default="3,6,9,12")
    p.add_argument("--B", type=int, default=4)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--phases", default="forward,backward")
    p.add_argument("--max-memory-gb", type=float, default=8.0,
                   help="skip torch-struct where its estimate is larger (this machine: 24 GB)")
    p.add_argument("--slow-s", type=float, default=20.0)
    p.add_argument("--out", required=True, help="JSON report, rewritten after each configuration")
    a = p.parse_args()

    phases = [x.strip() for x in a.phases.split(",") if x.strip()]
    report = {
        "what": "CPU forward/backward of replay's scan backends against torch-struct and flash-semicrf, Log semiring",
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "B": a.B,
        "repeats": a.repeats,
        "rows": [],
    }
    the_anchors = anchors()
    report["anchors"] = {name: version for name, _, _, version in the_anchors}
    with tempfile.TemporaryDirectory() as tmp:
        configs = [(T, K, C) for T in parse_list(a.T) for K in parse_list(a.K) for C in parse_list(a.C)]
        for i, (T, K, C) in enumerate(configs):
            torch.manual_seed(42)
            edge = torch.randn(a.B, T - 1, K, C, C)
            npy = os.path.join(tmp, "edge.npy")
            np.save(npy, edge.numpy())
            for phase in phases:
                row = {"T": T, "K": K, "C": C, "B": a.B, "KC": K * C, "phase": phase, "results": {}}
                ours = {}
                for backend in ("cpu", "torch"):
                    ours[backend] = run_replay(a.replay, npy, backend, phase)
                    row["results"][f"replay-{backend}"] = ours[backend]
                reference_z = ours["cpu"].get("logz")
                for name, fwd, _, _ in the_anchors:
                    if name == "torch-struct" and torch_struct_estimate_gb(a.B, T, K, C) > a.max_memory_gb:
                        row["results"][name] = {
                            "status": "skipped",
                            "reason": f"estimate {torch_struct_estimate_gb(a.B, T, K, C):.1f} GB > {a.max_memory_gb} GB",
                        }
                        continue
                    try:
                        r = time_phase(fwd, edge, phase, a.repeats, a.slow_s)
                    except RuntimeError as e:  # out of memory, or a shape the anchor rejects
                        r = {"status": "error", "error": str(e)[:300]}
                    if r.get("logz") is not None and reference_z is not None:
                        r["logz_rel_error_vs_replay"] = relative_error(reference_z, r["logz"])
                    r.pop("logz", None)
                    row["results"][name] = r
                for backend in ours.values():
                    backend.pop("logz", None)
                report["rows"].append(row)
                with open(a.out, "w") as f:
                    json.dump(report, f, indent=1)
                cells = " ".join(
                    f"{n}={r['time_ms_median']:.2f}" if r.get("time_ms_median") is not None else f"{n}={r['status']}"
                    for n, r in row["results"].items()
                )
                print(f"[{i + 1}/{len(configs)}] T={T} K={K} C={C} {phase}: {cells} (ms)", flush=True)
    table = markdown_table(report)
    with open(os.path.splitext(a.out)[0] + ".md", "w") as f:
        f.write(table)
    print(table)
    return 0


def markdown_table(report):
    """Per phase: median ms of each side over the configurations, how many each ran, and
    replay-cpu's speed-up over each (geometric mean, worst) where both ran."""
    names = []
    for row in report["rows"]:
        for n in row["results"]:
            if n not in names:
                names.append(n)
    lines = ["| phase | backend | configurations run | median time (ms) | replay-cpu speed-up: geo. mean | worst | max log Z rel. error |",
             "|---|---|---|---|---|---|---|"]
    for phase in sorted({r["phase"] for r in report["rows"]}):
        rows = [r for r in report["rows"] if r["phase"] == phase]
        for n in names:
            ran = [r for r in rows if r["results"].get(n, {}).get("status") in ("ok", "slow")]
            times = sorted(r["results"][n]["time_ms_median"] for r in ran)
            ratios = [r["results"][n]["time_ms_median"] / r["results"]["replay-cpu"]["time_ms_median"]
                      for r in ran if r["results"].get("replay-cpu", {}).get("status") == "ok"]
            errors = [r["results"][n].get("logz_rel_error_vs_replay") for r in ran]
            errors = [e for e in errors if e is not None]
            med = f"{times[len(times) // 2]:.3g}" if times else "-"
            geo = f"{float(np.exp(np.mean(np.log(ratios)))):.1f}x" if ratios else "-"
            worst = f"{min(ratios):.1f}x" if ratios else "-"
            err = f"{max(errors):.1e}" if errors else "-"
            lines.append(f"| {phase} | {n} | {len(ran)}/{len(rows)} | {med} | {geo} | {worst} | {err} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
