"""The GPU truth folders (../shared/gpu-truth/<machine>/<configuration>/) and `replay predict`
run on them: what scripts/fit_host_profile.py and scripts/bench_gpu_truth.py share.

Each folder holds a profiled trace of the model on the GPU (`trace.json.gz`), its signatures
replayed alone on that GPU (`isolated.json`, with each signature's host time per call measured
without the profiler), and the real model timed unprofiled in the same run
(`full_model_timing.json`: the truth) beside `comparison_report.json` (what replay predicted
then).
"""

import json
import os
import statistics
import subprocess
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_TRUTH = os.path.normpath(os.path.join(REPO, "..", "shared", "gpu-truth", "h200-2026-11-28"))
REPLAY = os.environ.get("REPLAY_BIN", os.path.join(REPO, "target", "release", "replay"))


def configurations(truth_dir):
    """The configuration folders of `truth_dir` that have a trace, isolated results and a truth."""
    out = []
    for name in sorted(os.listdir(truth_dir)):
        folder = os.path.join(truth_dir, name)
        needed = ["trace.json.gz", "isolated.json", "full_model_timing.json"]
        if os.path.isdir(folder) and all(os.path.exists(os.path.join(folder, n)) for n in needed):
            out.append(name)
    return out


def truth(folder):
    """The unprofiled model's median, p10 and p90 (µs), its sample count, and the median of
    each fifth of its samples in the order they ran (a machine that changes speed mid-run
    shows as fifths far apart: the truth's own median then depends on when it switched)."""
    with open(os.path.join(folder, "full_model_timing.json")) as f:
        full = json.load(f)
    samples = full.get("samples_us", [])
    return {
        "median_us": full["median_us"],
        "p10_us": full["p10_us"],
        "p90_us": full["p90_us"],
        "runs": len(samples),
        "fifths_us": fifths(samples),
    }


def fifths(samples):
    """The median of each fifth of `samples` in order; [] for fewer than 10."""
    if len(samples) < 10:
        return []
    n = len(samples) // 5
    return [round(statistics.median(samples[i * n:(i + 1) * n]), 1) for i in range(5)]


def earlier_predictions(folder):
    """What `replay compare` predicted in the run that recorded the folder (sum, timeline,
    sequence), from its comparison_report.json."""
    path = os.path.join(folder, "comparison_report.json")
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        report = json.load(f)
    return {name: p.get("predicted_us") for name, p in report.get("predictions", {}).items()
            if isinstance(p, dict)}


def predict(folder, host_times, host_profile=None):
    """`replay predict --isolated` of one folder as JSON: the replayed prediction's numbers."""
    cmd = [
        REPLAY, "predict",
        "--trace", os.path.join(folder, "trace.json.gz"),
        "--isolated", os.path.join(folder, "isolated.json"),
        "--host-times", host_times, "--json",
    ]
    if host_profile:
        cmd += ["--host-profile", host_profile]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {done.returncode}: {done.stderr.strip()}")
    return json.loads(done.stdout)


def with_host_section(template_path, host):
    """A temporary profile: `template_path`'s with `host` as its host section. Returns its path
    (the caller deletes it)."""
    with open(template_path) as f:
        profile = json.load(f)
    profile["host"] = host
    fd, path = tempfile.mkstemp(suffix=".json", prefix="host-profile-")
    with os.fdopen(fd, "w") as f:
        json.dump(profile, f, indent=2)
    return path


def error_percent(predicted, measured):
    return (predicted - measured) / measured * 100.0
