"""replay_kernels against the `replay` command and the trace files themselves."""

import gzip
import json
import subprocess

import pytest

import replay_kernels as rk
from conftest import REPO

BERT = "h100_bert_small_infer.json.gz"


def run_json(replay, *args):
    done = subprocess.run([str(replay), *args], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def test_kernels_are_linked_to_the_launch_with_their_correlation_id(traces):
    path = traces / BERT
    kernels = rk.load_trace(path).kernels()
    events = json.load(gzip.open(path))["traceEvents"]
    gpu = [e for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset") and e.get("ph") == "X"]
    launch_of = {
        e["args"]["correlation"]: e["name"]
        for e in events
        if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})
    }
    assert len(kernels) == len(gpu) > 50
    assert list(kernels["name"]) == [e["name"] for e in gpu]
    assert list(kernels["correlation"]) == [e["args"]["correlation"] for e in gpu]
    linked = kernels[kernels["launch"].notna()]
    assert len(linked) == sum(1 for e in gpu if e["args"]["correlation"] in launch_of)
    for correlation, launch in zip(linked["correlation"], linked["launch"]):
        assert launch == launch_of[correlation]
    # Every linked kernel has the op around its launch, and a signature of its tier.
    assert linked["op"].notna().mean() > 0.9
    assert set(kernels["tier"].dropna().unique()) <= {1, 2, 3, 4}
    assert kernels["ts"].iloc[0] == pytest.approx(gpu[0]["ts"])
    assert kernels["dur"].iloc[0] == pytest.approx(gpu[0]["dur"])


def test_kernels_join_their_ops_by_event(traces):
    trace = rk.load_trace(traces / BERT)
    kernels, ops = trace.kernels(), trace.ops()
    by_event = dict(zip(ops["event"], ops["name"]))
    with_op = kernels[kernels["op_event"].notna()]
    assert len(with_op) > 0
    for event, name in zip(with_op["op_event"], with_op["op"]):
        assert by_event[int(event)] == name
    # Shapes and dtypes are kept as the profiler recorded them.
    assert ops["input_dims"].notna().any() and ops["input_types"].notna().any()


def test_signatures_are_replay_classify(traces, replay, tmp_path):
    for name in (BERT, "cpu_only.json.gz", "a100_multistream_sync.json.gz"):
        path = str(traces / name)
        out = tmp_path / f"{name}.json"
        done = subprocess.run(
            [str(replay), "classify", "--trace", path, "--json", "--out", str(out)],
            capture_output=True, text=True, check=True,
        )
        trace = rk.load_trace(path)
        assert trace.signature_file() == done.stdout
        cli = json.loads(done.stdout)["signatures"]
        frame = trace.signatures()
        assert list(frame["id"]) == [s["id"] for s in cli]
        assert list(frame["tier"]) == [s["tier"] for s in cli]
        assert list(frame["name"]) == [s["name"] for s in cli]
        assert list(frame["count"]) == [s["count"] for s in cli]
        assert list(frame["trace_total_us"]) == [s["trace_total_us"] for s in cli]
        assert list(frame["op"].where(frame["op"].notna(), None)) == [
            (s.get("op") or {}).get("name") for s in cli
        ]
        for row, s in zip(frame.itertuples(), cli):
            gemm = s.get("gemm")
            if gemm:
                assert (row.gemm_m, row.gemm_n, row.gemm_k) == (gemm["m"], gemm["n"], gemm["k"])
                assert row.gemm_layout == ("T" if gemm["trans_a"] else "N") + ("T" if gemm["trans_b"] else "N")


def test_predict_is_replay_predict(traces, replay):
    path = str(traces / BERT)
    what_if = ["tier2*0.5", "launch=0"]
    cli = run_json(replay, "predict", "--trace", path, "--json", *[f"--what-if={w}" for w in what_if])
    frame = rk.load_trace(path).predict(what_if=what_if)
    assert list(frame["timeline"]) == ["original", *what_if]
    original = frame.iloc[0]
    assert original["predicted_us"] == cli["predicted_us"]
    assert original["measured_us"] == cli["measured_us"]
    assert original["error_percent"] == cli["error_percent"]
    for row, answer in zip(frame.iloc[1:].itertuples(), cli["what_ifs"]):
        assert row.predicted_us == answer["predicted_us"]
        assert row.change_percent == answer["change_percent"]
        assert row.changed_durations == answer["changed_durations"]
    # The BERT step is launch-bound: faster GEMMs do not shorten it, free launches do.
    assert frame["predicted_us"].iloc[2] < original["predicted_us"]


def test_predict_with_isolated_and_profile_is_replay_predict(traces, replay):
    path = str(traces / BERT)
    isolated = REPO / "results" / "gpu" / "2026-11-26-h200-run2" / "bert-isolated-blocked.json"
    profile = REPO / "profiles" / "a100_sxm4_40gb_datasheet.json"
    cli = run_json(
        replay, "predict", "--trace", path, "--json", "--isolated", str(isolated), "--profile", str(profile)
    )
    frame = rk.load_trace(path).predict(isolated=isolated, profile=profile)
    assert frame["timeline"].iloc[1].startswith("profile=")
    assert frame["predicted_us"].iloc[1] == cli["what_ifs"][0]["predicted_us"]
    last = frame.iloc[-1]
    assert last["timeline"] == f"isolated={isolated}"
    assert last["predicted_us"] == cli["predicted_us"]
    assert last["changed_durations"] == cli["replayed_signatures"]


def test_predict_with_the_host_model_is_replay_predict(replay):
    folder = REPO.parent / "shared" / "gpu-truth" / "h200-2026-11-28" / "bloom-560m-float32-seq5"
    trace, isolated = folder / "trace.json.gz", folder / "isolated.json"
    host = REPO / "profiles" / "h200_sxm_datasheet.json"
    for times in ("model", "trace"):
        cli = run_json(replay, "predict", "--trace", str(trace), "--json", "--isolated", str(isolated),
                       "--host-profile", str(host), "--host-times", times)
        frame = rk.load_trace(trace).predict(isolated=isolated, host_profile=host, host_times=times)
        assert frame.iloc[-1]["predicted_us"] == cli["predicted_us"]
    # The profiler's cost out: the host model's prediction is far below the trace's own.
    frame = rk.load_trace(trace).predict(isolated=isolated, host_profile=host)
    assert frame.iloc[-1]["predicted_us"] < 0.5 * cli["predicted_us"]
    with pytest.raises(rk.ReplayInputError, match="host-times choice"):
        rk.load_trace(trace).predict(isolated=isolated, host_times="fast")
    with pytest.raises(rk.ReplayInputError, match="need isolated"):
        rk.load_trace(trace).predict(host_times="model")


def test_critical_path_ends_at_the_predicted_step(traces):
    trace = rk.load_trace(traces / BERT)
    path = trace.critical_path()
    predicted = trace.predict()["predicted_us"].iloc[0]
    assert len(path) > 10
    assert set(path["node"]) <= {"framework", "host_op", "launch", "kernel", "memcpy", "memset"} | {
        n for n in path["node"] if n.startswith("wait:")
    }
    assert list(path["position"]) == sorted(path["position"])
    end = (path["start_us"] + path["dur"]).max()
    assert 0 < end <= predicted * 1.0001
    assert path[path["node"] == "kernel"]["signature"].notna().all()


def test_steps_and_perfetto(traces, tmp_path):
    trace = rk.load_trace(traces / "a100_train_cudagraph_rank0.json.gz")
    steps = trace.steps()
    assert len(steps) >= 1 and (steps["dur"] > 0).all()
    out = tmp_path / "timeline.json"
    trace.to_perfetto(out, what_if=["launch=0"])
    events = json.loads(out.read_text())["traceEvents"]
    processes = {e["args"]["name"] for e in events if e.get("name") == "process_name"}
    assert any(p.startswith("original") for p in processes)
    assert any("launch=0" in p for p in processes)


def test_arrow_and_polars_frames(traces):
    trace = rk.load_trace(traces / BERT)
    table = trace.signatures(format="arrow")
    assert table.num_rows == len(trace.signatures())
    assert str(table.schema.field("name").type) == "large_string"
    pl = pytest.importorskip("polars")
    frame = trace.kernels(format="polars")
    assert isinstance(frame, pl.DataFrame) and frame.height == len(trace.kernels())
    with pytest.raises(rk.ReplayInputError, match="format 'excel'"):
        trace.steps(format="excel")
