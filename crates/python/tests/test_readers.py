"""The result-file readers against the files themselves."""

import csv
import json
import subprocess

import pytest

import replay_kernels as rk
from conftest import REPO

RUN = REPO / "results" / "gpu" / "2026-11-26-h200-run2"


def test_isolated_rows_are_the_files():
    path = RUN / "bert-isolated-blocked.json"
    raw = json.loads(path.read_text())
    frames = rk.read_isolated(path)
    results = frames["results"]
    assert list(results["id"]) == [r["id"] for r in raw["results"]]
    assert list(results["status"]) == [r["status"] for r in raw["results"]]
    ok = [r for r in raw["results"] if r.get("stats")]
    assert ok, "the file has timed signatures"
    median = results.set_index("id")["stats.median_us"]
    for r in ok:
        # The core's JSON reader (serde_json) may round the last bit differently from Python's.
        assert median[r["id"]] == pytest.approx(r["stats"]["median_us"], rel=1e-15)
    assert frames["summary"]["device"].iloc[0] == raw["device"]


def test_comparison_report_sections():
    path = RUN / "bloom-560m-comparison_report.json"
    raw = json.loads(path.read_text())
    frames = rk.read_comparison(path)
    summary = frames["summary"].iloc[0]
    assert summary["full_model_inference_us"] == raw["full_model_inference_us"]
    assert summary["predictions.best"] == raw["predictions"]["best"]
    top = frames["top_signatures"]
    assert len(top) == len(raw["top_signatures"])


def test_profile_operations():
    path = REPO / "profiles" / "h100_sxm_datasheet.json"
    raw = json.loads(path.read_text())
    frames = rk.read_profile(path)
    assert frames["summary"]["metadata.hardware_name"].iloc[0] == raw["metadata"]["hardware_name"]


def test_suite_csv_is_the_file(replay, tmp_path):
    out = tmp_path / "scan"
    done = subprocess.run(
        [str(replay), "bench", "scan", "--T", "64", "--K", "4", "--C", "3", "--backends", "cpu",
         "--phases", "forward", "--device", "cpu", "--output-dir", str(out)],
        capture_output=True, text=True,
    )
    if done.returncode != 0:
        pytest.fail(f"replay bench scan failed: {done.stderr[-2000:]}")
    path = out / "benchmark_full.csv"
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    frame = rk.read_suite_csv(path)
    assert list(frame.columns) == list(rows[0].keys())
    assert len(frame) == len(rows) >= 1
    assert list(frame["T"]) == [int(r["T"]) for r in rows]
    assert list(frame["time_ms_median"]) == [float(r["time_ms_median"]) for r in rows]
    assert list(frame["status"]) == [r["status"] for r in rows]
