#!/usr/bin/env python3
"""Writes the first seeds of every fuzz target into fuzz/corpus/TARGET/seed-* from the
repository's own small files (cut down to a few KB), the trace files of ../shared/traces
when present, and a few hand-written values. `make fuzz` grows and minimises the corpus
from there; run this once for a new target (existing seeds are overwritten, nothing else
is touched).

    .venv/bin/python fuzz/seeds.py
"""
import gzip
import io
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "fuzz", "corpus")
TRACES = os.path.join(ROOT, "..", "shared", "traces", "kineto")


def put(target, name, data):
    folder = os.path.join(CORPUS, target)
    os.makedirs(folder, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(folder, "seed-" + name), "wb") as f:
        f.write(data)


def read(*parts):
    with open(os.path.join(ROOT, *parts), "rb") as f:
        return f.read()


def small_json(value):
    return json.dumps(value, indent=1).encode()


EVENTS = [
    '{"ph": "X", "cat": "kernel", "name": "void gemm<float>(int)", "pid": 0, "tid": 7, "ts": 1695835572943613, "dur": 2.25, "args": {"External id": 12, "correlation": 40, "stream": 7, "device": 0, "grid": [128, 1, 1], "block": [256, 1, 1], "blocks per SM": 1.5}}',
    '{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": "25738", "ts": 4458676522690.655, "dur": 3, "args": {"External id": 5, "Sequence number": -1, "Fwd thread id": 0, "Input Dims": [[4, 8], [8, 2]], "Input type": ["float", "float"], "Input Strides": [[8, 1], [2, 1]], "Concrete Inputs": ["", "\\u00e9 \\"q\\""], "Record function id": 0}}',
    '{"ph": "X", "cat": "cuda_runtime", "name": "hipMemcpyAsync", "pid": 1, "tid": 1, "ts": 10, "dur": 1, "args": {"cid": "52", "size": "2560", "stream": "0x0", "correlation": 9223372036854775807, "device": 9223372036854775808, "cbid": -9223372036854775808, "bytes": -0}}',
    '{"name": "Stream Sync", "ph": "X", "cat": "cuda_sync", "pid": 0, "tid": 7, "ts": 65.5, "dur": 2, "args": {"wait_on_stream": 3, "wait_on_cuda_event_record_corr_id": -1, "grid": [1, 2], "block": [1, -2, 3]}}',
    '{"ph": "f", "id": 12, "pid": 0, "tid": 7, "ts": 1000, "cat": "ac2g", "name": "ac2g", "bp": "e", "args": {"anything": [1, 2, {"x": "y"}]}}',
    '{ "args" : { "correlation" : 3 } , "ph" : "X" , "cat" : null , "name" : null , "pid" : null , "tid" : "" , "ts" : -1.5e3 , "dur" : 0E0 }',
]


def document(events, pretty):
    sep = ",\n  " if pretty else ","
    return ('{"schemaVersion": 1, "deviceProperties": [{"id": 0}],\n "traceEvents": [\n  '
            + sep.join(events) + '\n ],\n "traceName": "t", "baseTimeNanoseconds": 1700000000000000000}\n')


def main():
    for i, event in enumerate(EVENTS):
        put("trace_scanner", f"event{i}", b"\x00" + event.encode() + b",")
    put("trace_scanner", "generated", b"\x01" + bytes(range(256)))
    put("trace_chunked", "doc-pretty", b"\x06" + document(EVENTS * 3, True).encode())
    put("trace_chunked", "doc-line", b"\x04" + document(EVENTS * 3, False).encode())
    put("trace_chunked", "generated", b"\x03" + bytes(range(256)) * 2)

    for name in ["cpu_only", "a100_triton_example", "a100_multistream_sync", "mi250_rocm_train"]:
        path = os.path.join(TRACES, name + ".json.gz")
        if os.path.exists(path):
            with open(path, "rb") as f:
                raw = f.read()
            put("trace_load", name, raw)
            if name == "a100_triton_example":
                put("gzip", name, raw)
                put("gzip", name + "-text", b"\x00" + gzip.decompress(raw))
    put("trace_load", "doc", document(EVENTS, True))
    put("trace_load", "generated", b"\x01" + bytes(range(256)) * 2)
    put("trace_load", "generated-gz", b"\x02" + bytes(range(255, -1, -1)) * 2)
    put("gzip", "two-members", b"\x21" + document(EVENTS[:2], False).encode())

    signatures = json.loads(read("signatures", "h100_bert_small_infer.json"))
    signatures["signatures"] = signatures["signatures"][:3]
    put("signature_file", "bert3", small_json(signatures))

    isolated = json.loads(read("results", "gpu", "2026-11-26-h200-triton-isolated.json"))
    isolated["results"] = isolated["results"][:3]
    isolated["signatures_total"] = 3
    put("isolated_json", "triton3", small_json(isolated))

    for name in ["h100_sxm_datasheet", "a100_sxm4_40gb_datasheet"]:
        put("profile_json", name, read("profiles", name + ".json"))
    epyc = json.loads(read("profiles", "amd_epyc_2cpu.json"))
    for key, value in list(epyc.items()):
        if isinstance(value, list) and len(value) > 2:
            epyc[key] = value[:2]
        if isinstance(value, dict) and len(value) > 2:
            epyc[key] = dict(list(value.items())[:2])
    put("profile_json", "amd_epyc_cut", small_json(epyc))

    timing = {"model": "m.pt", "device": "cpu", "seq_len": 5, "batch": 1, "inputs": [],
              "warmup": 2, "runs": 3, "threads": 2, "timer": "wall", "mean_us": 0,
              "median_us": 0, "min_us": 0, "max_us": 0, "std_us": 0, "p10_us": 0,
              "p90_us": 0, "rse_median": None, "samples_us": [100.0, 110.5, 98.0],
              "model_format": "torch_compile", "compile_mode": "default"}
    put("report_json", "three", small_json(timing) + b"\x00" + small_json(isolated) + b"\x00"
        + small_json(signatures))

    manifest = {"format": "replay-shard/1", "command": "isolated",
                "argv": ["replay", "isolated", "sig.json", "--shard", "2/3"], "cwd": "/w",
                "shard": {"index": 2, "count": 3}, "shard_from": "--shard 2/3",
                "device": "cpu", "replay_version": "0.1.0", "host": "h", "work_items": 15,
                "work_list_hash": "ab12", "covered": ["a", "b"], "settings": {"noise": 0.01},
                "output_dir": "out", "files": ["isolated.json"]}
    put("shard_manifest", "isolated", small_json(manifest))
    put("shard_spec", "fixed", "2/4\n")
    put("shard_spec", "slurm", "auto\nSLURM_ARRAY_TASK_ID=12\nSLURM_ARRAY_TASK_MIN=10\n"
        "SLURM_ARRAY_TASK_COUNT=4\nSLURM_ARRAY_TASK_STEP=2\n")
    put("shard_spec", "k8s", "auto\nJOB_COMPLETION_INDEX=0\nREPLAY_SHARD_COUNT=3\n")

    put("execution_trace", "bloom_tiny_cpu", read("crates", "core", "tests", "data", "et",
                                                  "bloom_tiny_cpu.et.json.gz"))
    put("what_if", "kernels", "kernel:gemm*0.5\nop:aten::mm*2\n")
    put("what_if", "tiers", "tier2*0.5\nhost*0.8\nlaunch=2.5\nlaunch*1.5\n")

    for name in os.listdir(os.path.join(ROOT, "configs", "quant")):
        put("quant_yaml", name, read("configs", "quant", name))
    put("input_spec", "image", "float32[1,3,224,224]")
    put("input_spec", "ids", "int64[1, 128]:0..50257")
    try:
        import numpy as np
    except ImportError:
        print("numpy missing: no .npy seeds", file=sys.stderr)
    else:
        for name, array in [
            ("edge", np.arange(2 * 3 * 2 * 2 * 2, dtype=np.float32).reshape(2, 3, 2, 2, 2)),
            ("edge64", np.ones((1, 1, 1, 1, 1), dtype=np.float64)),
            ("lengths", np.array([4, 2], dtype=np.int64)),
            ("lengths32", np.array([1], dtype=np.int32)),
        ]:
            out = io.BytesIO()
            np.save(out, array)
            put("npy", name, out.getvalue())


if __name__ == "__main__":
    main()
