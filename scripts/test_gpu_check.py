#!/usr/bin/env python3
"""Checks of the GPU bundle and of scripts/gpu_check.sh on this machine (no GPU), so that the
prepared GPU run cannot rot between the rare times a GPU machine is lent; no pytest.

  .venv/bin/python scripts/test_gpu_check.py      (after `make gpu-bundle`; `make test` does both)

Runs the whole check on the CPU with --quick and reads its summary; checks that the CUDA
stages say why they are skipped on a machine without a driver, and that a bundle built
against another torch is refused before anything runs. Ends with `N passed, M failed`.
"""
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUNDLE = os.path.join(ROOT, "target/gpu-bundle")
CHECK = os.path.join(ROOT, "scripts/gpu_check.sh")
TMP = tempfile.mkdtemp(prefix="replay-gpu-check-test-")
BUNDLE_LIMIT = 48 * 1024 * 1024
TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


def check(*args, env=None):
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([CHECK, *args], capture_output=True, text=True, env=full_env, cwd=ROOT)


def dir_size(path):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


@test
def bundle_holds_what_the_gpu_machine_needs_and_fits_its_budget():
    size = dir_size(BUNDLE)
    assert 0 < size < BUNDLE_LIMIT, f"{size} bytes (budget {BUNDLE_LIMIT})"
    for name in ("bin/replay", "bin/replay-torch", "torch_version", "manifest.json", "scripts/gpu_check.py",
                 "scripts/gpu_check_stages.py", "scripts/gpu_check_runner.py", "models/bloom-tiny.pt",
                 "scripts/export_model.py", "scripts/bench_isolated.py", "scripts/bench_accuracy.py",
                 "traces/h100_bert_small_infer.json.gz", "traces/h100_vit_infer.json.gz",
                 "traces/h100_bert_small_infer.reference/GEMM.csv",
                 "traces/h100_vit_infer.reference/kernel_summary.csv"):
        assert os.path.exists(os.path.join(BUNDLE, name)), name
    assert os.access(os.path.join(BUNDLE, "bin/replay"), os.X_OK)
    assert os.access(os.path.join(BUNDLE, "bin/replay-torch"), os.X_OK)
    import torch
    with open(os.path.join(BUNDLE, "torch_version")) as f:
        assert f.read().strip() == torch.__version__
    manifest = json.load(open(os.path.join(BUNDLE, "manifest.json")))
    # The manifest counts every file but itself.
    without_manifest = size - os.path.getsize(os.path.join(BUNDLE, "manifest.json"))
    assert manifest["total_bytes"] == without_manifest, (manifest["total_bytes"], without_manifest)


QUICK_OUT = os.path.join(TMP, "quick")
QUICK = {}


QUICK_DEADLINE = 600


def quick_summary():
    """The whole check on the CPU with --quick (about 90 s of work on 2 quiet cores; the
    deadline leaves room for a loaded machine and costs nothing unused: at 300 s the selftest's
    slice, its share of the deadline, ran out at 38 s in a fresh clone's `make test` beside
    other work on 27 Nov 2026), run once for the
    tests that read it."""
    if not QUICK:
        started = time.monotonic()
        p = check("--all", "--device", "cpu", "--quick", "--deadline", str(QUICK_DEADLINE), "--out", QUICK_OUT)
        QUICK["wall_s"] = time.monotonic() - started
        QUICK["process"] = p
        with open(os.path.join(QUICK_OUT, "summary.json")) as f:
            QUICK["summary"] = json.load(f)
    return QUICK["process"], QUICK["summary"]


@test
def quick_cpu_run_passes_every_stage_and_stays_within_eight_files():
    p, s = quick_summary()
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert set(s["stages"]) == {"selftest", "truth", "compare", "compiled", "scan", "mhc", "calibrate",
                                "quant", "cpu"}, s["stages"].keys()
    # The compiled stage runs on a GPU only with --all (a minute of compiling on this CPU):
    # skipped, saying how to run it here, and given no slice.
    compiled = s["stages"].pop("compiled")
    assert compiled["status"] == "skipped" and "--stage compiled" in compiled["skipped"], compiled
    assert "compiled" not in s["slices_s"], s["slices_s"]
    for name, stage in s["stages"].items():
        assert stage["failed_commands"] == 0, (name, stage)
        assert stage["status"] == "ok", (name, stage)
        assert "skipped" not in stage, (name, stage)
        if name in ("mhc", "quant", "cpu"):
            assert "archive" not in stage, stage  # their figures are all in summary.json
        else:
            assert stage["archive"] == f"{name}.tar.gz"
    files = os.listdir(QUICK_OUT)
    assert len(files) <= 8, files
    assert sorted(files) == sorted(["summary.json", "gpu_check.log", "selftest.tar.gz", "truth.tar.gz",
                                    "compare.tar.gz", "scan.tar.gz", "calibrate.tar.gz"]), files
    assert s["cuda_available"] is False and "libcuda" in s["cuda_unavailable_reason"]
    assert s["machine"]["bundle"]["torch_version"] == s["machine"]["torch"]


@test
def quick_all_run_keeps_its_deadline_and_plans_every_slice():
    p, s = quick_summary()
    # The whole command, the wrapper's torch check included, inside its deadline.
    assert QUICK["wall_s"] < QUICK_DEADLINE, QUICK["wall_s"]
    assert s["deadline_s"] == QUICK_DEADLINE and s["wall_s"] < QUICK_DEADLINE, s["wall_s"]
    assert list(s["statuses"]) == ["selftest", "truth", "compare", "compiled", "scan", "quant", "mhc",
                                   "calibrate", "cpu"]
    assert set(s["statuses"].values()) == {"ok", "skipped"}, s["statuses"]
    # Each stage that ran got a slice, and none ran past it by more than the watchdog's reaction time.
    for name, stage in s["stages"].items():
        if stage["status"] == "skipped":
            continue
        assert 0 < s["slices_s"][name] <= QUICK_DEADLINE - 10, s["slices_s"]
        assert stage["wall_s"] <= s["slices_s"][name] + 3, (name, stage["wall_s"], s["slices_s"][name])
    assert s["machine"]["kind"] == "cpu" and s["results_name"].endswith("-cpu-summary.json"), s["machine"]


def timed_check(*args, env=None):
    started = time.monotonic()
    p = check(*args, env=env)
    return p, time.monotonic() - started


@test
def sixty_seconds_are_kept_with_a_slice_too_small_a_hung_call_and_a_hung_check():
    out = os.path.join(TMP, "sixty")
    # truth gets 3 s (two isolated runs of ~80 signatures do not fit); scan starts with a call
    # that never returns (the test hook), as a hung CUDA call would; the last stage hangs in the
    # check itself, where only the run's watchdog can end it.
    p, wall = timed_check("--all", "--device", "cpu", "--quick", "--deadline", "60", "--slice", "truth=3",
                          "--slice", "scan=5", "--out", out,
                          env={"REPLAY_GPU_CHECK_HANG": "scan", "REPLAY_GPU_CHECK_HANG_PYTHON": "cpu"})
    assert wall < 60, wall
    assert p.returncode == 1, (p.returncode, p.stderr[-2000:])
    with open(os.path.join(out, "summary.json")) as f:
        s = json.load(f)  # valid JSON, last written by the watchdog
    assert s["ended_by_watchdog"] is True and s["wall_s"] < 60, s.get("wall_s")
    stages = s["stages"]
    truth, scan = stages["truth"], stages["scan"]
    assert truth["status"] == "cut" and "slice" in truth["cut"], truth
    assert truth["wall_s"] <= 3 + 2, truth["wall_s"]
    # What it finished before the cut is kept.
    assert truth["traces"]["h100_bert_small_infer"]["signatures_in_file"] > 0, truth
    assert scan["status"] == "cut" and "sleep 3600" in scan["cut"], scan
    assert scan["wall_s"] <= 5 + 2, scan["wall_s"]
    assert "watchdog: killed" in open(os.path.join(out, "gpu_check.log")).read()
    assert stages["cpu"]["status"] == "cut" and "watchdog" in stages["cpu"]["cut"], stages["cpu"]
    # Every stage between them ran in what was left: ok, or cut at its slice's end.
    assert list(stages) == ["selftest", "truth", "compare", "compiled", "scan", "quant", "mhc", "calibrate",
                            "cpu"]
    assert stages["compiled"]["status"] == "skipped", stages["compiled"]
    for name in ("selftest", "compare", "quant", "mhc", "calibrate"):
        assert stages[name]["status"] in ("ok", "cut"), (name, stages[name])
        assert stages[name]["wall_s"] <= s["slices_s"][name] + 3, (name, stages[name]["wall_s"])
    assert len(os.listdir(out)) <= 8, os.listdir(out)
    # No command of the run outlives it.
    left = subprocess.run(["pgrep", "-f", "sleep 3600"], capture_output=True, text=True).stdout.split()
    assert not left, left


@test
def an_h200_is_named_and_its_truth_errors_are_said_to_be_against_an_h100():
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import gpu_check
    import gpu_check_stages
    h200 = {"cuda": {"Ok": {"devices": [{"name": "NVIDIA H200", "total_memory_bytes": 150754820096,
                                          "multiprocessors": 132}]}}}
    m = gpu_check.machine(h200)
    assert (m["kind"], m["gpu"], m["gpu_sms"], m["gpu_memory_gib"]) == ("H200", "NVIDIA H200", 132, 140.4), m
    t = gpu_check_stages.truth_machine("cuda", m["gpu"])
    assert t["ran_on"] == "NVIDIA H200" and "H100" in t["h200"] and "1.4x" in t["h200"], t
    h100 = gpu_check_stages.truth_machine("cuda", "NVIDIA H100 80GB HBM3")
    assert "h200" not in h100 and gpu_check.machine({"cuda": {"Err": "no driver"}})["kind"] == "cpu"
    assert gpu_check_stages.truth_machine("cpu", None) == {"ran_on": "cpu"}


@test
def compiled_stage_summarises_the_h200_capture_and_the_first_runs_summary_reads():
    # The kernels.json that capture --compile wrote on the H200 (2026-11-26): ten Triton kernels.
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import gpu_check_compiled
    fixture = os.path.join(ROOT, "crates/core/tests/data/compiled/h200_bloom_tiny/inductor/kernels.json")
    k = gpu_check_compiled.kernels_summary(gpu_check_compiled.load_json(fixture))
    assert k["count"] == 10 and k["kinds"] == {"triton": 10}, k
    assert all(r["name"].startswith("triton_") and r["layouts"] == 1 for r in k["kernels"]), k
    assert gpu_check_compiled.kernels_summary(None) == {"count": 0, "kinds": {}, "kernels": []}
    rows = [{"id": "a", "name": "mm", "tier": 3, "status": "failed", "reason": "shapes", "trace_total_us": 30},
            {"id": "b", "name": "triton_x", "tier": 4, "status": "ok", "predicted_us": 2.0, "trace_total_us": 60},
            {"id": "d", "name": "triton_y", "tier": 4, "status": "unsupported", "trace_total_us": 20},
            {"id": "c", "name": "copy", "tier": 1, "status": "ok", "trace_total_us": 10}]
    iso = gpu_check_compiled.isolated_summary({"results": rows})
    assert iso["by_tier_status"] == {"tier3/failed": 1, "tier4/ok": 1, "tier4/unsupported": 1, "tier1/ok": 1}, iso
    assert (iso["replayed_share"], iso["generated_replayed_share"]) == (70 / 120, 60 / 80), iso
    assert [r["id"] for r in iso["rows"]] == ["a", "b", "d"], iso
    # The committed summary of that run has every stage, in the check's order.
    s = gpu_check_compiled.load_json(os.path.join(ROOT, "results/gpu/2026-11-26-h200-summary.json"))
    assert s["machine"]["gpu"] == "NVIDIA H200" and s["results_name"] == "2026-11-26-h200-summary.json"
    assert list(s["stages"]) == ["selftest", "truth", "compare", "compiled", "scan", "quant", "mhc",
                                 "calibrate", "cpu"], list(s["stages"])


@test
def the_compiled_stage_summarises_the_h200_captures_triton_kernels():
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import gpu_check_compiled
    path = os.path.join(ROOT, "crates/core/tests/data/compiled/h200_bloom_tiny/inductor/kernels.json")
    summary = gpu_check_compiled.kernels_summary(gpu_check_compiled.load_json(path))
    assert summary["count"] == 10 and summary["kinds"] == {"triton": 10}, summary
    # That run's recorder found no launch data: each row says so (replay's reader finds it).
    assert all(r["cubin"] is None and r["cache_hash"] is None for r in summary["kernels"]), summary
    rows = gpu_check_compiled.isolated_summary({"results": [
        {"id": 3, "name": "triton_poi_fused_add_0", "tier": 4, "status": "failed",
         "method": None, "reason": "triton_poi_fused_add_0: cuLaunchKernel: CUDA_ERROR_INVALID_VALUE"}]})
    assert rows["by_tier_status"] == {"tier4/failed": 1} and "cuLaunchKernel" in rows["rows"][0]["reason"], rows


@test
def bad_slices_and_deadlines_are_refused():
    for args, words in ((["--slice", "nope=3"], "unknown stage"), (["--slice", "truth=x"], "not a number"),
                        (["--slice", "truth=0"], "more than 0"), (["--deadline", "5"], "at least"),
                        (["--stage", "truth,bogus"], "unknown stage")):
        p = check("--device", "cpu", "--out", os.path.join(TMP, "bad"), *args)
        assert p.returncode == 2 and words in p.stderr, (args, p.returncode, p.stderr)


@test
def selftest_stage_records_every_tier_and_the_model_checks():
    _, s = quick_summary()
    st = s["stages"]["selftest"]
    assert st["passed"] is True
    assert {c["tier"] for c in st["tiers"]["checks"]} >= {1, 2, 3}
    assert st["tiers"]["failed"] == 0 and st["tiers"]["passed"] == len(st["tiers"]["checks"])
    names = [c["name"] for c in st["model"]["checks"]]
    assert any("compare pipeline" in n for n in names), names
    assert st["model"]["failed"] == 0


@test
def truth_stage_compares_every_replayed_signature_with_the_trace():
    _, s = quick_summary()
    for name in ("h100_bert_small_infer", "h100_vit_infer"):
        t = s["stages"]["truth"]["traces"][name]
        with open(os.path.join(ROOT, "signatures", name + ".json")) as f:
            signatures = json.load(f)
        n_signatures = len(signatures["signatures"])
        dist = t["signature_error"]
        # Every signature replays on the CPU (coverage 100 %), so each has an error.
        assert dist["signatures"] + len(t["not_replayed"]) == n_signatures, (dist, t["not_replayed"])
        assert 0.0 <= dist["share_within_10_percent"] <= 1.0
        assert len(dist["worst"]) == min(5, dist["signatures"])
        worst = [abs(w["error_percent"]) for w in dist["worst"]]
        assert worst == sorted(worst, reverse=True) and worst[0] >= dist["median_abs_error_percent"]
        for w in dist["worst"]:
            recomputed = 100 * (w["isolated_us"] - w["trace_mean_us"]) / w["trace_mean_us"]
            assert abs(recomputed - w["error_percent"]) < 1e-9 * max(1.0, abs(recomputed))
        tl = t["timeline"]
        assert tl["measured_us"] > 0 and tl["predicted_us"] > 0
        assert abs(tl["error_percent"] - 100 * (tl["predicted_us"] - tl["measured_us"]) / tl["measured_us"]) < 1e-6
        # The trace's own durations through the timeline reproduce its step (self-check).
        assert abs(tl["self_check_error_percent"]) < 0.01, tl
        # Every replay that was measured says what timed it: the clock, on the CPU.
        timing = t["timing"]
        assert list(timing["timers"]) == ["monotonic clock"], timing
        assert timing["timers"]["monotonic clock"] >= 1 and timing["blocking_timeouts"] == 0, timing
    with tarfile.open(os.path.join(QUICK_OUT, "truth.tar.gz")) as tar:
        names = tar.getnames()
    assert "truth/h100_vit_infer/isolated.json" in names and "truth/h100_vit_infer/predict.json" in names, names


@test
def scan_stage_times_cpu_and_torch_with_every_case_checked():
    _, s = quick_summary()
    scan = s["stages"]["scan"]
    assert scan["backends"] == "cpu,torch", scan
    assert scan["command"]["rc"] == 0, scan["command"]
    assert scan["grid"] == {"T": "32,64", "K": "4", "C": "3,6", "semirings": "Log,Max"}, scan["grid"]
    for backend in ("cpu", "torch"):
        for semiring in ("Log", "Max"):
            for phase in ("forward", "both"):
                entry = scan["cases"][f"{backend}/{semiring}/{phase}"]
                # 2 T x 1 K x 2 C, every one checked against the float64 reference and timed.
                assert entry["status"] == {"success": 4}, (backend, phase, entry)  # the seed's word (#29)
                assert entry["median_time_ms"] > 0, entry


@test
def quant_stage_checks_every_recipe_and_reports_what_is_not_implemented():
    _, s = quick_summary()
    quant = s["stages"]["quant"]
    assert quant["command"]["rc"] == 0, quant["command"]
    rows = quant["rows"]
    # 8 recipe names x 2 shapes, in the runner's order.
    assert len(rows) == 16, rows
    assert quant["statuses"] == {"ok": 14, "not_implemented": 2}, quant["statuses"]
    for r in rows:
        if r["quantization"] == "int4wo-128-hqq":
            assert r["status"] == "not_implemented" and "HQQ" in r["error_msg"], r
            continue
        assert r["status"] == "ok", r
        assert float(r["quantized_inference_time_in_ms"]) > 0, r
        assert "peak_allocated_bytes" in r["memory_stats"], r
        if r["quantization"] != "baseline":
            assert float(r["sqnr_db"]) > 15, r
            assert "dequantize-then-matmul" in r["error_msg"], r


@test
def quant_stage_on_cuda_says_plainly_that_cuda_is_unavailable():
    out = os.path.join(TMP, "quant-cuda")
    p = check("--stage", "quant", "--device", "cuda", "--quick", "--out", out)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    with open(os.path.join(out, "summary.json")) as f:
        quant = json.load(f)["stages"]["quant"]
    assert quant["skipped"].startswith("needs CUDA:") and "libcuda" in quant["skipped"], quant
    # The binary itself, asked for cuda here, skips each row with the reason (never a CPU number).
    config = os.path.join(TMP, "quant-cuda.yml")
    with open(config, "w") as f:
        json.dump({"quantization_config_recipe_names": ["int4wo-128"], "output_dir": out,
                   "model_params": {"matrix_shapes": [{"name": "custom", "shapes": [[32, 256, 256]]}],
                                    "device": "cuda"}}, f)
    bench = subprocess.run([os.path.join(BUNDLE, "bin/replay"), "bench", "quant", "--config", config,
                            "--quiet"], capture_output=True, text=True, cwd=ROOT)
    # Since issue 29 a YAML device that cannot open exits 2 naming the file and the reason, like
    # --device cuda everywhere else, and writes no rows.
    assert bench.returncode == 2, bench.stderr
    assert "quant-cuda.yml" in bench.stderr and "CUDA is unavailable" in bench.stderr, bench.stderr
    assert not [f for f in os.listdir(out) if f.startswith("results_")] if os.path.isdir(out) else True


@test
def mhc_stage_runs_every_stage_with_copies_not_applicable_on_the_cpu():
    _, s = quick_summary()
    mhc = s["stages"]["mhc"]
    assert [c["rc"] for c in mhc["commands"]] == [0], mhc["commands"]
    rows = mhc["rows"]
    assert len(rows) == 12, rows  # torch and fused, six stages each
    for row in rows:
        if "Copy" in row["Case"]:
            assert row["Status"] == "not_applicable" and row["Time(ms)"] == "", row
        else:
            assert row["Status"] == "ok" and float(row["Time(ms)"]) > 0, row
    assert any(r["Impl"] == "fused" and r["Note"].startswith("checked") for r in rows), rows


@test
def calibrate_stage_records_peaks_gflops_and_bandwidth():
    _, s = quick_summary()
    cal = s["stages"]["calibrate"]
    assert cal["command"]["rc"] == 0, cal["command"]
    assert cal["peak_gflops"] > 0 and cal["peak_sources"][0]["kind"] == "computed", cal
    assert set(cal["gflops"]) == {"matmul_float32_N=1024", "matmul_float32_N=2048"}, cal["gflops"]
    assert all(g > 0 for g in cal["gflops"].values())
    assert len(cal["bandwidth_gbps"]) == 6 and all(b > 0 for b in cal["bandwidth_gbps"].values())
    assert cal["failures"] == {}


@test
def compare_and_cpu_stages_report_errors_and_coverage():
    _, s = quick_summary()
    run = s["stages"]["compare"]["runs"]["bloom-tiny-float32-seq5"]
    assert run["coverage"] == 1.0, run
    assert run["measured_us"] > 0 and isinstance(run["timeline_error_percent"], float)
    assert "skipped" in s["stages"]["compare"]["energy"]
    # The host section, measured first on the stage's device and kept in its archive.
    host = s["stages"]["compare"]["host"]
    assert host["command"]["rc"] == 0 and host["failures"] == {}, host
    assert host["machine"]["device"] == "cpu" and 0 < host["dispatch_us_per_op"] < 100, host
    assert host["interpreter_us_per_op"] > 0 and host["profiler_us_per_cpu_event"] > 0, host
    assert host["launch_us"] is None and host["profiler_us_per_runtime_event"] is None, host
    # And again by compare itself, in the process that measured the truth (no --host-profile).
    own = run["host_in_process"]
    assert 0 < own["dispatch_us_per_op"] < 100 and own["interpreter_us_per_op"] > 0, own
    assert "--host-profile" not in run["command"]["cmd"], run["command"]
    with tarfile.open(os.path.join(QUICK_OUT, "compare.tar.gz")) as tar:
        assert "compare/host/host.json" in tar.getnames()
        assert "compare/bloom-tiny-float32-seq5/host.json" in tar.getnames()
    cpu = s["stages"]["cpu"]
    assert cpu["threads"] == 2
    noise = cpu["isolated_noise"]["result"]
    assert noise["threads"] == 2 and noise["coverage"]["h100_bert_small_infer"]["replayed_share"] == 1.0
    acc = cpu["accuracy"]["result"]["models"]["bloom-tiny"]
    assert list(acc) == ["seq-len 5"], list(acc)
    runs = acc["seq-len 5"]["runs"]
    assert len(runs) == 1 and runs[0]["coverage"] == 1.0


@test
def cuda_stages_on_a_machine_without_a_driver_are_skipped_with_the_reason():
    out = os.path.join(TMP, "cuda")
    p = check("--stage", "selftest", "--device", "cuda", "--out", out)
    assert p.returncode == 0, p.stderr
    s = json.load(open(os.path.join(out, "summary.json")))
    st = s["stages"]["selftest"]
    assert st["skipped"].startswith("needs CUDA") and "libcuda" in st["skipped"], st
    assert sorted(os.listdir(out)) == ["gpu_check.log", "summary.json"]


@test
def a_bundle_built_against_another_torch_is_refused_before_anything_runs():
    fake = os.path.join(TMP, "fake-bundle")
    shutil.copytree(BUNDLE, fake)
    with open(os.path.join(fake, "torch_version"), "w") as f:
        f.write("2.9.1+cu128\n")
    out = os.path.join(TMP, "refused")
    p = check("--device", "cpu", "--quick", "--out", out, env={"REPLAY_GPU_BUNDLE": fake})
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert "built against torch 2.9.1+cu128" in p.stderr, p.stderr
    assert not os.path.exists(out)


@test
def a_missing_bundle_is_named_with_the_command_that_makes_it():
    p = check("--device", "cpu", env={"REPLAY_GPU_BUNDLE": os.path.join(TMP, "nowhere")})
    assert p.returncode == 2 and "make gpu-bundle" in p.stderr, p.stderr


@test
def a_carried_archive_is_unpacked_before_the_check_runs():
    # `make gpu-bundle` writes target/gpu-bundle.tar.xz, the one carried (the folder and the
    # working tree with .git were over 64 MiB on 2026-11-30); gpu_check.sh unpacks it there.
    # What the wrapper looks at (the binary and the torch version), archived as make does.
    source = os.path.join(TMP, "archived", "gpu-bundle")
    os.makedirs(os.path.join(source, "bin"))
    shutil.copy2(os.path.join(BUNDLE, "bin", "replay"), os.path.join(source, "bin", "replay"))
    shutil.copy2(os.path.join(BUNDLE, "torch_version"), source)
    place = os.path.join(TMP, "carried")
    os.makedirs(place)
    archive = os.path.join(place, "gpu-bundle.tar.xz")
    with open(archive, "wb") as f:
        tar = subprocess.Popen(["tar", "-C", os.path.dirname(source), "-cf", "-", "gpu-bundle"],
                               stdout=subprocess.PIPE)
        subprocess.run(["xz", "-0", "-T0"], stdin=tar.stdout, stdout=f, check=True)
        assert tar.wait() == 0
    unpacked = os.path.join(place, "gpu-bundle")
    # A stage that does not exist: refused by the check itself, after the bundle was found.
    p = check("--stage", "nosuch", env={"REPLAY_GPU_BUNDLE": unpacked})
    assert p.returncode == 2 and "nosuch" in p.stderr, (p.returncode, p.stderr)
    assert os.access(os.path.join(unpacked, "bin", "replay"), os.X_OK)
    assert "not found" not in p.stderr, p.stderr


@test
def help_lists_the_stages_without_a_bundle():
    p = check("--help", env={"REPLAY_GPU_BUNDLE": os.path.join(TMP, "nowhere")})
    assert p.returncode == 0
    for stage in ("selftest", "truth", "compare", "scan", "mhc", "calibrate", "quant", "cpu",
                  "--quick", "--all", "--deadline", "--slice", "cut", "watchdog"):
        assert stage in p.stdout, stage


def main():
    passed = failed = 0
    for fn in TESTS:
        try:
            fn()
            print(f"ok    {fn.__name__}")
            passed += 1
        except Exception:  # noqa: BLE001 - report every failure, then the total
            print(f"FAIL  {fn.__name__}")
            traceback.print_exc()
            failed += 1
    shutil.rmtree(TMP, ignore_errors=True)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
