#!/usr/bin/env python3
"""Self-test of the Python helpers (the zoo's models, export_model.py, capture_trace.py); no pytest.

  .venv/bin/python scripts/test_scripts.py [NAME ...]   (NAME: run the tests whose name holds it)

Prints one line per check and ends with `N passed, M failed`; exit status 1 on a failure.
Small and CPU-only: the -tiny sizes everywhere, the real sizes only on the meta device (no memory).
Most CLI calls go through main() in this process (fast); one real subprocess per script
checks the actual executable and exit status.
"""
import contextlib
import gzip
import io
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import time
import tempfile
import traceback
import warnings

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bert  # noqa: E402
import bloom  # noqa: E402
import capture_trace  # noqa: E402
import export_model  # noqa: E402
import gpt2  # noqa: E402
import resnet  # noqa: E402
import t5  # noqa: E402
import zoo  # noqa: E402

warnings.filterwarnings("ignore", category=DeprecationWarning)  # torch.jit is deprecated
TMP = tempfile.mkdtemp(prefix="replay-scripts-test-")
TINY = bloom.CONFIGS["bloom-tiny"]
TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


def cli(main, *argv):
    """Run a script's main() in-process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main([str(a) for a in argv])
        except SystemExit as e:  # argparse errors
            rc = e.code
    return rc, out.getvalue(), err.getvalue()


def run_script(name, *argv):
    p = subprocess.run([sys.executable, os.path.join(HERE, name), *map(str, argv)],
                       capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def eager_tiny(seed=0, state=None):
    m = bloom.BloomForCausalLM(TINY)
    if state is None:
        bloom.init_weights(m, seed)
    else:
        m.load_state_dict(state)
    return m.eval()


def max_diff(a, b):
    return (a.float() - b.float()).abs().max().item()


def write_safetensors(path, tensors, dtype):
    """Minimal safetensors writer (the inverse of export_model.read_safetensors_py)."""
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        t = t.detach().to(dtype).contiguous()
        raw = (t.view(torch.int16) if dtype == torch.bfloat16 else t).numpy().tobytes()
        header[name] = {"dtype": {torch.float32: "F32", torch.bfloat16: "BF16"}[dtype],
                        "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    header["__metadata__"] = {"format": "pt"}
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)  # the format allows space padding; align the data to 8 bytes
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def closed_form_slopes(n):
    p = 2 ** int(math.floor(math.log2(n)))
    main = [2.0 ** (-8.0 * i / p) for i in range(1, p + 1)]
    extra = [2.0 ** (-4.0 * j / p) for j in range(1, 2 * (n - p), 2)]
    return main + extra


# ---- model -------------------------------------------------------------------------------

@test
def parameter_count_matches_formula():
    h, V, L = TINY.hidden_size, TINY.vocab_size, TINY.n_layer
    formula = V * h + 4 * h + L * (12 * h * h + 13 * h)
    n = sum(p.numel() for p in eager_tiny().parameters())
    assert n == formula == bloom.expected_num_parameters(TINY), (n, formula)
    with torch.device("meta"):  # the real size, without allocating 2 GB
        big = bloom.BloomForCausalLM(bloom.CONFIGS["bloom-560m"])
    n = sum(p.numel() for p in big.parameters())
    assert n == bloom.expected_num_parameters(big.config) == 559_214_592, n  # bloom-560m's published count


@test
def alibi_slopes_closed_form():
    for n in (16, 12, 4, 6, 1):
        got = bloom.alibi_slopes(n)
        want = torch.tensor(closed_form_slopes(n), dtype=torch.float64)
        assert got.dtype == torch.float32 and got.shape == (n,), (n, got)
        assert torch.allclose(got.double(), want, rtol=1e-6, atol=0), (n, got, want)
    # 12 heads: p = 8 -> 2^-1 .. 2^-8, then the odd powers of 2^-0.5 for the 4 extra heads
    assert abs(bloom.alibi_slopes(12)[8].item() - 2 ** -0.5) < 1e-7
    # the model keeps its slopes fp32 in any dtype (BLOOM casts only the finished bias)
    assert eager_tiny().to(torch.bfloat16).alibi_slopes.dtype == torch.float32


@test
def causal_and_alibi_behaviour():
    m = eager_tiny()
    x = torch.randint(0, TINY.vocab_size, (1, 8))
    y = x.clone()
    y[0, 5:] = (y[0, 5:] + 1) % TINY.vocab_size  # change only the future tokens
    with torch.no_grad():
        a, b = m(x), m(y)
    assert max_diff(a[:, :5], b[:, :5]) == 0.0, "earlier positions must not see later tokens"
    assert max_diff(a[:, 5:], b[:, 5:]) > 0
    assert a.shape == (1, 8, TINY.vocab_size) and a.dtype == torch.float32


# ---- the zoo -----------------------------------------------------------------------------

@test
def zoo_real_sizes_have_their_published_parameter_counts():
    # Built on the meta device: the real architectures without allocating their weights.
    with torch.device("meta"):
        counts = {
            "gpt2-small": gpt2.GPT2LMHeadModel(gpt2.CONFIGS["gpt2-small"]),
            "bert-base": bert.BertModel(bert.CONFIGS["bert-base"]),
            "t5-small": t5.T5ForConditionalGeneration(t5.CONFIGS["t5-small"]),
            "resnet50": resnet.ResNet(resnet.CONFIGS["resnet50"]),
        }
    counts = {k: sum(p.numel() for p in m.parameters()) for k, m in counts.items()}
    # GPT-2 small and T5-small as published; bert-base-uncased less its pooler (590592);
    # torchvision's resnet50.
    assert counts == {"gpt2-small": 124_439_808, "bert-base": 109_482_240 - 590_592,
                      "t5-small": 60_506_624, "resnet50": 25_557_032}, counts


def zoo_input(name, batch, size):
    entry = zoo.MODELS[name]
    return entry.example(batch, size, torch.float32, torch.Generator().manual_seed(batch + size))


@test
def zoo_exports_and_its_traces_generalise():
    for name in ("gpt2-tiny", "bert-tiny", "t5-tiny", "resnet-tiny"):
        out = os.path.join(TMP, f"{name}.pt")
        rc, so, se = cli(export_model.main, "--model", name, "--out", out, "--seq-len", 5)
        assert rc == 0 and se == "", (name, se)
        want_input = "float32[1,3,32,32]" if name == "resnet-tiny" else "int64[1,5]:0..1000"
        assert so.startswith(out) and so.rstrip().endswith(f"input {want_input}"), so
        traced, eager = torch.jit.load(out), zoo.MODELS[name].build(0)
        with torch.no_grad():
            for batch, size in ((1, 5), (2, 9)):
                x = zoo_input(name, batch, size)
                d = max_diff(traced(x), eager(x))
                assert d <= 1e-4, (name, batch, size, d)


@test
def zoo_models_stress_what_they_should():
    graphs = {name: torch.jit.load(os.path.join(TMP, f"{name}.pt")).inlined_graph
              for name in ("gpt2-tiny", "bert-tiny", "resnet-tiny")}
    kinds = {name: {n.kind() for n in g.nodes()} for name, g in graphs.items()}
    # BERT through nn.TransformerEncoder: the fused fast path, one op per layer.
    layers = [n for n in graphs["bert-tiny"].nodes() if n.kind() == "aten::_transformer_encoder_layer_fwd"]
    assert len(layers) == bert.CONFIGS["bert-tiny"].n_layer, kinds["bert-tiny"]
    # GPT-2 op by op: traced size arithmetic (the floor_divide of issue 12) and matmul attention.
    assert {"aten::floor_divide", "aten::matmul", "aten::linear"} <= kinds["gpt2-tiny"], kinds["gpt2-tiny"]
    assert {"aten::_convolution", "aten::batch_norm", "aten::max_pool2d"} <= kinds["resnet-tiny"], kinds["resnet-tiny"]
    # The decoders are causal: later tokens never change earlier positions.
    for name in ("gpt2-tiny",):
        m = zoo.MODELS[name].build(0)
        x = torch.randint(0, 1000, (1, 8))
        y = x.clone()
        y[0, 5:] = (y[0, 5:] + 1) % 1000
        with torch.no_grad():
            a, b = m(x), m(y)
        assert max_diff(a[:, :5], b[:, :5]) == 0.0 and max_diff(a[:, 5:], b[:, 5:]) > 0, name


# ---- export ------------------------------------------------------------------------------

@test
def export_trace_generalises_to_other_lengths():
    out = os.path.join(TMP, "tiny.pt")
    rc, so, se = run_script("export_model.py", "--model", "bloom-tiny", "--out", out, "--seq-len", 5)
    assert rc == 0, se
    assert so.count("\n") == 1 and so.startswith(out) and f" {bloom.expected_num_parameters(TINY)} parameters" in so, so
    traced, eager = torch.jit.load(out), eager_tiny(seed=0)
    with torch.no_grad():
        for shape in ((1, 5), (1, 9), (2, 9)):
            x = torch.randint(0, TINY.vocab_size, shape)
            d = max_diff(traced(x), eager(x))
            assert d <= 1e-4, (shape, d)


@test
def export_pt2_program_and_aoti_package():
    """--format pt2: an ExportedProgram that agrees with eager; --aoti: an AOTInductor package
    whose metadata records the input it was compiled for and its device, and that agrees too."""
    import zipfile
    eager, x = eager_tiny(seed=0), torch.randint(0, TINY.vocab_size, (1, 5))
    with torch.no_grad():
        want = eager(x)
    program = os.path.join(TMP, "tiny.pt2")
    rc, so, se = cli(export_model.main, "--model", "bloom-tiny", "--format", "pt2", "--out", program)
    assert rc == 0, se
    assert so.startswith(program) and "(ExportedProgram)" in so, so
    with torch.no_grad():
        got = torch.export.load(program).module()(x)
    assert max_diff(got, want) <= 1e-4
    package = os.path.join(TMP, "tiny-aoti.pt2")
    rc, so, se = cli(export_model.main, "--model", "bloom-tiny", "--format", "pt2", "--aoti",
                     "--out", package)
    assert rc == 0, se
    assert "AOTInductor package for cpu, compiled in" in so, so
    compiled = torch._inductor.aoti_load_package(package)
    metadata = compiled.get_metadata()
    assert metadata["replay_input"] == zoo.MODELS["bloom-tiny"].input_spec(1, 5, "float32"), metadata
    assert metadata["replay_model"] == "bloom-tiny" and metadata["AOTI_DEVICE_KEY"] == "cpu", metadata
    with torch.no_grad():
        got = compiled(x)
    assert max_diff(got, want) <= 1e-3
    names = zipfile.ZipFile(package).namelist()
    assert any(n.endswith("/archive_format") for n in names), names
    assert any("/data/aotinductor/model/" in n for n in names), names
    assert not any("/data/aotinductor/" in n for n in zipfile.ZipFile(program).namelist())
    assert not [f for f in os.listdir(TMP) if ".partial" in f], os.listdir(TMP)


@test
def export_pt2_usage_errors_come_before_torch():
    """The pt2 flags' usage errors exit 2 from export's checks, before torch is imported."""
    out = os.path.join(TMP, "refused.pt2")
    cases = [
        (["--model", "bloom-tiny", "--aoti", "--out", out], "give it with --format pt2"),
        (["--model", "bloom-tiny", "--format", "pt2", "--out", os.path.join(TMP, "m.pt")], "must end in .pt2"),
        (["--model", "bloom-tiny", "--format", "pt2", "--device", "tpu", "--out", out], "bad --device 'tpu'"),
        (["--model", "bloom-tiny", "--device", "cpu", "--out", os.path.join(TMP, "m.pt")], "--device is for --format pt2"),
    ]
    for argv, msg in cases:
        code = ("import sys; sys.path.insert(0, %r); import export_model; rc = export_model.main(%r); "
                "print('torch imported' if 'torch' in sys.modules else 'no torch'); sys.exit(rc)" % (HERE, argv))
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert p.returncode == 2 and msg in p.stderr and p.stdout.strip() == "no torch", (argv, p)
    assert not os.path.exists(out)
    if not torch.cuda.is_available():
        rc, _, se = cli(export_model.main, "--model", "bloom-tiny", "--format", "pt2", "--aoti",
                        "--device", "cuda", "--out", out)
        assert rc == 2 and "CUDA is not available" in se, se


@test
def export_bfloat16():
    out = os.path.join(TMP, "tiny-bf16.pt")
    rc, so, se = cli(export_model.main, "--model", "bloom-tiny", "--out", out, "--dtype", "bfloat16")
    assert rc == 0, se
    traced = torch.jit.load(out)
    assert traced.alibi_slopes.dtype == torch.float32
    x = torch.randint(0, TINY.vocab_size, (1, 7))
    with torch.no_grad():
        y, ref = traced(x), eager_tiny().to(torch.bfloat16)(x)
    assert y.dtype == torch.bfloat16 and max_diff(y, ref) == 0.0


@test
def export_from_hf_config_json():
    # bloom-560m's own config.json spells hidden size n_embed and heads num_attention_heads
    cfg_path = os.path.join(TMP, "config.json")
    with open(cfg_path, "w") as f:
        json.dump({"n_layer": 1, "n_embed": 48, "num_attention_heads": 12, "vocab_size": 300,
                   "layer_norm_epsilon": 1e-5, "model_type": "bloom"}, f)
    out = os.path.join(TMP, "cfg.pt")
    rc, so, se = cli(export_model.main, "--config", cfg_path, "--out", out, "--seq-len", 3)
    assert rc == 0, se
    want = bloom.expected_num_parameters(bloom.BloomConfig(n_layer=1, hidden_size=48, n_head=12, vocab_size=300))
    assert f" {want} parameters" in so, so
    with torch.no_grad():
        assert torch.jit.load(out)(torch.zeros(1, 6, dtype=torch.long)).shape == (1, 6, 300)


@test
def safetensors_roundtrip_through_weights():
    src = eager_tiny(seed=7)
    sd = src.state_dict()
    x = torch.randint(0, TINY.vocab_size, (2, 6))
    for dtype, prefix in ((torch.float32, "transformer."), (torch.bfloat16, "")):
        d = os.path.join(TMP, f"ckpt-{dtype}".replace("torch.", ""))
        os.makedirs(d)
        tensors = {prefix + k: v for k, v in sd.items()}
        if prefix:  # BloomForCausalLM checkpoints may also save the tied head
            tensors["lm_head.weight"] = sd["word_embeddings.weight"]
        path = os.path.join(d, "model.safetensors")
        write_safetensors(path, tensors, dtype)
        back = export_model.read_safetensors_py(path)
        rounded = {k: v.to(dtype).float() for k, v in tensors.items()}
        assert back.keys() == rounded.keys()
        assert all(torch.equal(back[k].float(), rounded[k]) for k in back), "reader != writer"
        out = os.path.join(d, "m.pt")
        rc, so, se = cli(export_model.main, "--model", "bloom-tiny", "--weights", d, "--out", out)
        assert rc == 0, se
        ref = eager_tiny(state={k: v.to(dtype).float() for k, v in sd.items()})
        with torch.no_grad():
            assert max_diff(torch.jit.load(out)(x), ref(x)) == 0.0, dtype


# ---- capture -----------------------------------------------------------------------------

def check_trace(events, seq_len):
    ops = [e for e in events if e.get("cat") == "cpu_op"]
    assert len(ops) > 50, len(ops)
    assert all("Input Dims" in e.get("args", {}) for e in ops)
    names = {e["name"] for e in ops}
    assert {"aten::addmm", "aten::baddbmm", "aten::bmm", "aten::layer_norm", "aten::tanh"} <= names, names
    steps = [e for e in events if e.get("name", "").startswith("ProfilerStep#") and e.get("ph") == "X"]
    assert len(steps) == 1, steps
    s = steps[0]
    inside = [e for e in ops if s["ts"] <= e["ts"] and e["ts"] + e["dur"] <= s["ts"] + s["dur"] + 1]
    assert len(inside) == len(ops), "every op belongs to the one profiled step"
    emb = [e for e in ops if e["name"] == "aten::embedding"]
    assert emb and emb[0]["args"]["Input Dims"][1] == [1, seq_len], emb


@test
def capture_cpu_trace():
    model = os.path.join(TMP, "tiny.pt")
    if not os.path.exists(model):
        cli(export_model.main, "--model", "bloom-tiny", "--out", model)
    out = os.path.join(TMP, "traces", "tiny.json")
    rc, so, se = run_script("capture_trace.py", "--model", model, "--seq-len", 5,
                            "--device", "cpu", "--warmup", 2, "--out", out)
    assert rc == 0, se
    assert "STAGE:" not in se and "USDT:" not in se, "the profiler's progress lines are held back"
    with open(out) as f:
        trace = json.load(f)
    check_trace(trace["traceEvents"], 5)
    # Five candidate steps by default; the kept one is the median of their times.
    steps = trace["replayCaptureCandidateStepsUs"]
    assert len(steps) == 5 and all(x > 0 for x in steps), steps
    assert steps[trace["replayCaptureChosenCandidate"]] == sorted(steps)[2], trace["replayCaptureChosenCandidate"]
    # The step printed and recorded is the kept trace's own ProfilerStep span, the one the
    # timeline self-check of `replay compare` compares against (issue #29: two figures before).
    span = [e["dur"] for e in trace["traceEvents"]
            if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#")]
    assert len(span) == 1 and abs(steps[trace["replayCaptureChosenCandidate"]] - span[0]) <= 0.1, (steps, span)
    import re
    printed = re.search(r"step ([0-9.]+) us \(median of 5 profiled\)", so)
    assert printed and abs(float(printed.group(1)) - span[0]) <= 0.051, (so, span)
    gz = os.path.join(TMP, "traces", "tiny.json.gz")
    threads = torch.get_num_threads()
    rc, so, se = cli(capture_trace.main, "--model", model, "--seq-len", 7, "--threads", 1,
                     "--candidates", 3, "--out", gz)
    torch.set_num_threads(threads)  # in-process: put it back
    assert rc == 0 and "threads 1" in so and "median of 3 profiled" in so, (so, se)
    with gzip.open(gz, "rt") as f:
        trace = json.load(f)
    check_trace(trace["traceEvents"], 7)
    assert len(trace["replayCaptureCandidateStepsUs"]) == 3
    assert not [n for n in os.listdir(os.path.dirname(out)) if n.startswith("tmp")], "temp files left"


@test
def capture_execution_trace_links_the_kept_step():
    model = os.path.join(TMP, "tiny.pt")
    if not os.path.exists(model):
        cli(export_model.main, "--model", "bloom-tiny", "--out", model)
    out = os.path.join(TMP, "et", "tiny.json")
    rc, so, se = run_script("capture_trace.py", "--model", model, "--device", "cpu",
                            "--candidates", 1, "--execution-trace", "--out", out)
    assert rc == 0, se
    assert "Execution Trace Observer" not in se, "the observer's notes are held back"
    et_path = os.path.join(TMP, "et", "tiny.et.json")
    assert "tiny.et.json  execution trace of one more step" in so, so
    with open(out) as f:
        trace = json.load(f)
    with open(et_path) as f:
        et = json.load(f)
    nodes = {a["value"]: n["name"] for n in et["nodes"] for a in n.get("attrs", [])
             if a["name"] == "rf_id"}
    ops = [e for e in trace["traceEvents"] if e.get("cat") in ("cpu_op", "user_annotation")]
    ids = [e["args"].get("Record function id") for e in ops]
    assert all(isinstance(i, int) and i > 0 for i in ids), ids[:10]
    assert all(nodes.get(i, "").split("#")[0] == e["name"].split("#")[0] for i, e in zip(ids, ops))
    assert trace["replayExecutionTrace"]["ids_copied"] == len(ops)
    # Each integral input's [min, max] is recorded: the token ids of the embedding (its
    # input tensor 1; the weight, tensor 0, is float), within the vocabulary.
    ranges = [json.loads(a["value"]) for n in et["nodes"] if n["name"] == "aten::embedding"
              for a in n["attrs"] if a["name"] == "tensor_range" and a["value"]]
    assert ranges and all(set(r) == {"1"} and 0 <= r["1"][0] <= r["1"][1] for r in ranges), ranges
    assert not [n for n in os.listdir(os.path.dirname(out)) if n.startswith("tmp")], "temp files left"
    # A step that ran other ops gets no ids: the capture fails rather than link wrongly.
    other = json.loads(json.dumps(trace))
    next(e for e in other["traceEvents"] if e.get("cat") == "cpu_op")["name"] = "aten::other"
    try:
        capture_trace.copy_record_function_ids(other, trace, et_path)
        raise AssertionError("a different op sequence was linked")
    except RuntimeError as e:
        assert "ran other ops than the kept step" in str(e), e


@test
def capture_with_input_specs():
    model = os.path.join(TMP, "resnet-tiny.pt")
    if not os.path.exists(model):
        cli(export_model.main, "--model", "resnet-tiny", "--out", model)
    out = os.path.join(TMP, "traces", "resnet.json")
    rc, so, se = cli(capture_trace.main, "--model", model, "--input", "float32[2,3,32,32]",
                     "--candidates", 1, "--out", out)
    assert rc == 0 and "input float32[2,3,32,32]" in so, (so, se)
    with open(out) as f:
        ops = [e for e in json.load(f)["traceEvents"] if e.get("cat") == "cpu_op"]
    conv = [e for e in ops if e["name"] == "aten::_convolution"]  # what a traced conv2d records
    assert conv and conv[0]["args"]["Input Dims"][0] == [2, 3, 32, 32], conv[:1]
    # The grammar is replay's: ranges for integers, and a dtype per input.
    assert capture_trace.parse_input_spec("int64[1, 128]:0..50257") == (torch.int64, [1, 128], (0, 50257))
    assert capture_trace.parse_input_spec("bfloat16[]") == (torch.bfloat16, [], None)
    ids = capture_trace.make_inputs([capture_trace.parse_input_spec("int32[3,4]")], 7, 1, 1, 0)[0]
    assert ids.dtype == torch.int32 and ids.shape == (3, 4) and 0 <= ids.min() and ids.max() < 7


# ---- error paths -------------------------------------------------------------------------

@test
def error_paths_exit_2():
    out = os.path.join(TMP, "err.pt")
    bad_json = os.path.join(TMP, "bad.json")
    with open(bad_json, "w") as f:
        f.write("{not json")
    no_heads = os.path.join(TMP, "noheads.json")
    with open(no_heads, "w") as f:
        json.dump({"n_layer": 2, "hidden_size": 64, "vocab_size": 10}, f)
    sd = eager_tiny().state_dict()
    missing = os.path.join(TMP, "ckpt-missing")
    extra = os.path.join(TMP, "ckpt-extra")
    for d in (missing, extra):
        os.makedirs(d)
    write_safetensors(os.path.join(missing, "a.safetensors"),
                      {k: v for k, v in sd.items() if k != "ln_f.bias"}, torch.float32)
    write_safetensors(os.path.join(extra, "a.safetensors"), {**sd, "h.9.mlp.foo": sd["ln_f.bias"]}, torch.float32)
    not_a_model = os.path.join(TMP, "garbage.pt")
    with open(not_a_model, "wb") as f:
        f.write(b"this is not a zip archive")
    null_eps = os.path.join(TMP, "null-eps.json")
    with open(null_eps, "w") as f:
        json.dump({"n_layer": 2, "hidden_size": 64, "n_head": 4, "vocab_size": 10,
                   "layer_norm_epsilon": None}, f)
    not_safetensors = os.path.join(TMP, "ckpt-garbage")
    os.makedirs(not_safetensors)
    with open(os.path.join(not_safetensors, "a.safetensors"), "wb") as f:
        f.write(b"this is not a safetensors file")  # its "header length" is exabytes
    a_folder = os.path.join(TMP, "a-folder")
    os.makedirs(a_folder)
    two_inputs = os.path.join(TMP, "two-inputs.pt")
    torch.jit.trace(lambda x, y: x + y, (torch.zeros(1), torch.zeros(1))).save(two_inputs)
    cases = [
        (export_model.main, ["--model", "bloom-7b", "--out", out], "unknown model"),
        (export_model.main, ["--config", bad_json, "--out", out], "bad config"),
        (export_model.main, ["--config", no_heads, "--out", out], "n_head"),
        (export_model.main, ["--config", os.path.join(TMP, "nope.json"), "--out", out], "bad config"),
        (export_model.main, ["--model", "bloom-tiny", "--weights", missing, "--out", out], "missing: ln_f.bias"),
        (export_model.main, ["--model", "bloom-tiny", "--weights", extra, "--out", out], "unexpected: h.9.mlp.foo"),
        (export_model.main, ["--model", "bloom-tiny", "--weights", TMP + "/empty-dir", "--out", out], "no *.safetensors"),
        (export_model.main, ["--config", null_eps, "--out", out], "layer_norm_epsilon must be a number"),
        (export_model.main, ["--model", "bloom-tiny", "--weights", not_safetensors, "--out", out],
         "not a safetensors file"),
        (export_model.main, ["--model", "bloom-tiny", "--out", a_folder], "is a folder"),
        (export_model.main, ["--model", "bloom-tiny", "--out", os.path.join(not_a_model, "m.pt")],
         "is not a folder"),
        (capture_trace.main, ["--model", os.path.join(TMP, "nope.pt"), "--out", out], "not found"),
        (capture_trace.main, ["--model", a_folder, "--out", out], "is a folder"),
        (capture_trace.main, ["--model", two_inputs, "--warmup", 0, "--candidates", 1, "--out", out],
         "does not run on token ids [1, 5]"),
        (capture_trace.main, ["--model", not_a_model, "--out", out], "cannot load"),
        (capture_trace.main, ["--model", not_a_model, "--device", "tpu", "--out", out], "--device"),
        (capture_trace.main, ["--model", not_a_model, "--threads", 0, "--out", out], "--threads"),
        (capture_trace.main, ["--model", not_a_model, "--candidates", 0, "--out", out], "--candidates"),
        (capture_trace.main, ["--model", not_a_model, "--input", "float33[1]", "--out", out], "unknown dtype"),
        (capture_trace.main, ["--model", not_a_model, "--input", "int64[1,0]", "--out", out], "accepted: DTYPE"),
        (capture_trace.main, ["--model", not_a_model, "--input", "float32[2]:0..3", "--out", out], "integer dtypes only"),
        (capture_trace.main, ["--model", not_a_model, "--input", "int64[2]:3..3", "--out", out], "empty"),
        (capture_trace.main, ["--model", os.path.join(TMP, "resnet-tiny.pt"), "--out", out], "does not run on token ids [1, 5]"),
        (export_model.main, ["--model", "gpt2-tiny", "--weights", TMP, "--out", out], "BLOOM checkpoints"),
    ]
    if torch.cuda.is_available():
        cases.append((capture_trace.main, ["--model", not_a_model, "--device", "cuda:99", "--out", out], "CUDA device"))
    else:
        cases.append((capture_trace.main, ["--model", not_a_model, "--device", "cuda", "--out", out], "CUDA is not available"))
    for main, argv, msg in cases:
        rc, so, se = cli(main, *argv)
        assert rc == 2 and msg in se, (argv, rc, se)
    assert not os.path.exists(out), "a failed export must not leave a model behind"
    assert os.listdir(a_folder) == [] and not os.path.exists(a_folder + ".tmp"), \
        "an --out that is a folder is left as it was"
    # and the real executables' exit status
    rc, _, se = run_script("export_model.py", "--model", "bloom-7b", "--out", out)
    assert rc == 2 and "unknown model" in se, (rc, se)
    rc, _, se = run_script("capture_trace.py", "--model", not_a_model, "--out", out)
    assert rc == 2 and "cannot load" in se, (rc, se)


@test
def quant_torch_recipes_match_dequantize_then_matmul_and_profile():
    """scripts/quant_torch.py (replay bench quant's Python side): each recipe's output against
    the float64 product with its dequantized weight, a Kineto trace, and a usage error."""
    import quant_torch
    torch.manual_seed(3)
    w = torch.randn(64, 256) * 0.05
    x = torch.randn(80, 256)
    exact = x.double() @ w.double().t()
    for recipe, floor in (("baseline", 100), ("int8wo", 35), ("int8dq", 30), ("int4wo-64", 15),
                          ("float8wo", 25), ("float8dq-tensor", 22), ("float8dq-row", 22)):
        with torch.no_grad():
            y = quant_torch.QLinear(recipe, w)(x)
        noise = (exact - y.double()).norm()
        sqnr = 20 * math.log10(exact.norm() / noise) if noise > 0 else math.inf
        assert y.shape == (80, 64) and sqnr > floor, (recipe, sqnr)
    trace = os.path.join(TMP, "quant", "profile.json")
    rc, out, err = cli(quant_torch.main, "--model-type", "ln_linear_relu", "--m", 8, "--k", 64,
                       "--n", 32, "--recipe", "int8dq", "--dtype", "torch.float32",
                       "--profile", trace)
    assert rc == 0, err
    assert json.loads(out.strip().splitlines()[-1])["profile"] == trace
    with open(trace) as f:
        names = {e.get("name") for e in json.load(f)["traceEvents"]}
    assert "aten::_int_mm" in names, sorted(n for n in names if n and n.startswith("aten::"))
    rc, _, err = cli(quant_torch.main, "--model-type", "linear", "--m", 8, "--k", 48, "--n", 8,
                     "--recipe", "int4wo-32")
    assert rc == 2 and "not a multiple" in err, (rc, err)


@test
def soak_samples_memory_by_round_and_checks_the_results():
    """scripts/soak.py (issue 34's soak) on a small signature file for a few seconds: RSS
    sampled through the run, read by round, and the isolated results checked complete."""
    import soak
    out = os.path.join(TMP, "soak.json")
    kernels = os.path.join(os.path.dirname(HERE), "signatures", "h100_bert_small_infer.json")
    rc, so, se = cli(soak.main, "--kernels", kernels, "--duration", 4, "--interval", 0.1, "--out", out)
    assert rc == 0, (so, se)
    with open(out) as f:
        report = json.load(f)
    assert report["results"]["valid"] and report["results"]["rows"] == 16, report["results"]
    assert report["exit_code"] == 0 and report["replayable"] >= 1
    rounds = report["rss_by_round"]
    assert len(rounds) == soak.ROUNDS and all(r["samples"] > 0 for r in rounds), rounds
    # The replay's process tree holds libtorch: well over the 10 MB of the launcher alone.
    assert report["rss_at_end"]["peak_bytes"] > 50e6, report["rss_at_end"]
    assert set(report["end_over_warmup"]) == {"floor", "peak"}
    assert report["goal_met"] in (True, False)
    assert len(report["samples"]) >= 10 and "running" not in report
    # Each sample's peak (the processes' VmHWM since the sample before) is at least its RSS.
    assert all(peak >= rss for _, rss, peak in report["samples"]), report["samples"][:5]


# ---- compiled models (test_compile.py) ---------------------------------------------------

import test_compile  # noqa: E402

for _fn in test_compile.tests(TMP, cli, run_script):
    test(_fn)

# ---- make fuzz's figures (fuzz_record.py) ------------------------------------------------

import fuzz_record  # noqa: E402


@test
def test_fuzz_record_appends_each_sitting_and_sums_the_targets():
    folder = os.path.join(TMP, "fuzz")
    corpus = os.path.join(folder, "corpus")
    os.makedirs(corpus, exist_ok=True)
    for name, data in [("a", b"12"), ("b", b"345")]:
        with open(os.path.join(corpus, name), "wb") as f:
            f.write(data)
    log = os.path.join(folder, "log")
    results = os.path.join(folder, "fuzz.json")
    with open(log, "w") as f:
        f.write("#1000 DONE cov: 10\nstat::number_of_executed_units: 1000\n"
                "stat::average_exec_per_sec:     500\nstat::peak_rss_mb:              40\n")
    argv = ["--results", results, "--target", "t", "--log", log, "--start", "10",
            "--end", "12.5", "--times-before", "0m1.000s 0m0.500s",
            "--times-after", "0m3.000s 0m0.750s", "--corpus", corpus]
    rc, out, err = cli(fuzz_record.main, *argv)
    assert rc is None and "1000 executions in 2.5 s (2.2 CPU s)" in out, (rc, out, err)
    with open(log, "a") as f:
        f.write("panicked at src/x.rs: mismatch: different events\n")
    rc, out, err = cli(fuzz_record.main, *argv, "--status", "77", "--artifacts", "crash-ab")
    with open(results) as f:
        figures = json.load(f)
    assert [s["mismatches"] for s in figures["sittings"]] == [0, 1], figures
    sitting = figures["sittings"][0]
    assert (sitting["corpus_files"], sitting["corpus_bytes"], sitting["peak_rss_mb"]) == (2, 5, 40)
    totals = figures["targets"]["t"]
    assert (totals["executions"], totals["seconds"], totals["sittings"]) == (2000, 5.0, 2), totals
    assert (totals["crashes"], totals["mismatches"], totals["cpu_seconds"]) == (0, 1, 4.4), totals
    assert fuzz_record.classify("timeout-x", "") == "hangs"
    assert fuzz_record.classify("oom-x", "") == "ooms"
    assert fuzz_record.classify("crash-x", "panicked at index out of bounds") == "crashes"


@test
def measured_run_reports_peak_memory_and_its_watchdog_kills_past_the_cap():
    """scripts/measured_run.py (bench_huge's runner): ru_maxrss of a process that touches
    300 MB, and the same process killed by the RSS watchdog under a 120 MB cap."""
    import measured_run
    grow = [sys.executable, "-c", "import time; b = bytearray(300_000_000); time.sleep(0.5); print('done')"]
    free = measured_run.run(grow)
    assert free["rc"] == 0 and free["stdout"].strip() == "done", free
    assert free["peak_rss_bytes"] >= 300_000_000 and not free["killed_by_cap"], free
    capped = measured_run.run(grow, cap=120_000_000)
    assert capped["killed_by_cap"] and capped["rc"] == -9, capped
    assert capped["watched_peak_rss_bytes"] > 120_000_000, capped
    piped = measured_run.run_pipeline([sys.executable, "-c", "print('x' * 1000)"],
                                      [sys.executable, "-c", "import sys; print(len(sys.stdin.read()))"])
    assert piped["rc"] == 0 and piped["stdout"].strip() == "1001" and piped["producer"]["rc"] == 0, piped


@test
def model_memory_peak_counts_bloom_tinys_parameters_and_its_step():
    """scripts/model_memory_peak.py (the model's own peak of bench_sequence_memory's ET pair):
    bloom-tiny's 164,224 float32 parameters (embedding 1000 x 64, tied LM head; two layers of
    two layer norms, qkv, dense, h_to_4h and 4h_to_h; two more layer norms) and 5 input ids are
    held before the step, which allocates more on top; an unknown model exits 2."""
    rc, out, err = run_script("model_memory_peak.py", "--zoo", "bloom-tiny", "--seq-len", "5")
    assert rc == 0, err
    peak = json.loads(out)
    assert peak["parameters_bytes"] == 164_224 * 4, peak
    assert peak["inputs_bytes"] == 5 * 8, peak
    assert peak["held_before_bytes"] >= peak["parameters_bytes"] + peak["inputs_bytes"], peak
    assert peak["peak_bytes"] > peak["held_before_bytes"], peak
    assert peak["allocator_events_in_step"] > 0, peak
    rc, _, err = run_script("model_memory_peak.py", "--zoo", "no-such-model")
    assert rc == 2 and "no-such-model" in err, err


@test
def bench_many_signatures_quick_checks_every_row_and_measures_the_peak():
    """scripts/bench_many_signatures.py --quick (make bench-many-signatures at small sizes): a
    file read whole (200 signatures) and one streamed in windows (10^4), each run to its end
    with one row per signature, its time and peak RSS in the report; no generated file left."""
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(HERE, "..", "target"))
    replay = os.path.join(target, "release", "replay")
    assert os.access(replay, os.X_OK), f"{replay} is not built: cargo build --release first"
    out = os.path.join(TMP, "bench_many_signatures.json")
    work = os.path.join(TMP, "many_signatures")
    rc, so, se = run_script("bench_many_signatures.py", "--quick", "--out", out,
                            "--work-dir", work, "--replay", replay, "--timeout", "300")
    assert rc == 0, (rc, so, se)
    report = json.load(open(out))
    runs = report["runs"]
    assert [r["signatures"] for r in runs] == [200, 10000], runs
    for r in runs:
        assert r["rc"] == 0 and r["complete"] is True and r["rows"] == r["signatures"], r
        assert r["peak_rss_bytes"] > 0 and r["wall_s"] > 0 and r["file_bytes"] > 100 * r["signatures"], r
    assert report["machine"]["load_before"] and report["date"]
    assert not [n for n in os.listdir(work) if n.endswith(".json")], os.listdir(work)


@test
def bench_huge_quick_measures_every_size_and_the_ranks():
    """scripts/bench_huge.py --quick (make bench-huge at MB sizes): generated traces through
    replay classify (from a pipe when replay reads one, else from files), each size's time, GB/s
    and peak RSS with the same signatures at every size, 8 gzipped ranks in one call or
    "unsupported" with replay's answer, the streamed predict at every size (--predict) the same
    as in memory, and the report written; nothing left in the work folder."""
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(HERE, "..", "target"))
    for binary in ("replay", "replay-tracegen"):
        path = os.path.join(target, "release", binary)
        assert os.access(path, os.X_OK), f"{path} is not built: cargo build --release first"
    out = os.path.join(TMP, "bench_huge.json")
    work = os.path.join(target, "bench", "huge-selftest")
    shutil.rmtree(work, ignore_errors=True)
    rc, so, se = run_script("bench_huge.py", "--quick", "--predict", "--out", out, "--work-dir", work)
    assert rc == 0, (rc, so, se)
    report = json.load(open(out))
    rows = report["streaming"]["rows"]
    assert [r["size"] for r in rows] == ["4M", "8M", "16M"], rows
    stdin = report["capabilities"]["stdin"]
    assert report["streaming"]["mode"] == ("pipe" if stdin["supported"] else "file"), report["streaming"]
    if not stdin["supported"]:
        assert "--trace -" in stdin["reason"] and "exited" in stdin["reason"], stdin
    for r in rows:
        assert r["rc"] == 0 and r["json_bytes"] >= 4_000_000 and r["gb_per_s"] > 0, r
        assert 0 < r["peak_rss_bytes"] < 2e9 and r["signatures"] >= 30, r
    assert rows[0]["steps"] < rows[1]["steps"] < rows[2]["steps"], rows
    # The invocations grow with the steps: the same work per step at every size.
    per_step = {r["invocations"] / r["steps"] for r in rows}
    assert len(per_step) == 1, per_step
    assert report["streaming"]["same_signatures_at_every_size"] is True
    assert isinstance(report["streaming"]["rss_flat"]["flat"], bool), report["streaming"]["rss_flat"]
    assert report["in_memory"]["rc"] == 0, report["in_memory"]
    # The smallest size under each budget: the same signatures, each peak against its budget.
    budgets = report["budgets"]["rows"]
    assert [r["budget_bytes"] for r in budgets] == [64e6, 128e6, 256e6, 1e9], budgets
    for r in budgets:
        assert r["rc"] == 0 and r["same_signatures"] is True and isinstance(r["within_budget"], bool), r
    ranks = report["ranks"]
    assert ranks["ranks"] == 8 and ranks["json_bytes"] >= 8 * 2_000_000, ranks
    assert "unsupported" in ranks["one_call"] or ranks["one_call"]["gb_per_s"] > 0, ranks
    if "unsupported" not in ranks["one_call"]:
        assert ranks["one_call_in_memory"]["gb_per_s"] > 0, ranks
        assert ranks["same_signatures_default_and_in_memory"] is True, ranks
    assert ranks["separate_commands"]["ok"], ranks
    assert report["hta"]["skipped"] == "--quick"
    # --predict: the streamed predict from the pipe at every size, one prediction per step, the
    # same as the in-memory one on the smallest size's file.
    predict = report["predict"]
    assert [r["size"] for r in predict["rows"]] == ["4M", "8M", "16M"], predict
    for r in predict["rows"]:
        assert r["rc"] == 0 and r["predicted_steps"] == r["steps"] and r["predicted_us"] > 0, r
    assert predict["in_memory"]["rc"] == 0, predict["in_memory"]
    assert predict["same_prediction_streamed_and_in_memory"] is True, predict
    assert set(report["goals"]) >= {"peak_rss_at_most_1GB", "rss_flat_within_10pct"}
    left = [n for n in os.listdir(work) if n.endswith(".json") and not n.endswith(".sig.json")]
    assert not left, f"generated traces left behind: {left}"
    shutil.rmtree(work, ignore_errors=True)


@test
def kill_resume_quick_resumes_killed_runs_to_identical_rows():
    # One SIGKILL each of isolated and bench scan at a random row, resumed and compared
    # (scripts/kill_resume.py; `make bench-resume` runs 100).
    out = os.path.join(TMP, "kill_resume.json")
    rc, stdout, stderr = run_script("kill_resume.py", "--quick", "--out", out)
    assert rc == 0, stdout + stderr
    with open(out) as f:
        report = json.load(f)
    assert set(report["commands"]) == {"isolated", "bench scan"}, report
    for name, entry in report["commands"].items():
        assert entry["kills"] == 1 and entry["complete"] == 1 and entry["identical"] == 1, (name, entry)
        assert entry["rows_kept_byte_for_byte"] == 1, (name, entry)
    assert report["total_kills"] == report["total_identical"] == 2
    rc, _, stderr = run_script("kill_resume.py", "--kills", "0")
    assert rc == 2 and "at least 1" in stderr, stderr


# ---- TorchScript's fusion groups (fusion_groups.py) ---------------------------------------

import fusion_groups  # noqa: E402


@test
def test_fusion_groups_are_named_as_torchscript_names_them_and_annotate_their_events():
    """A scripted chain run with the CPU fuser on: the profiler's name of each group is the one
    kernel_name() gives (the long one hashed as TorchScript hashes it), and annotate() gives
    every fused event its group's input types."""
    c = torch._C
    saved = (c._jit_can_fuse_on_cpu(), c._jit_texpr_fuser_enabled(), c._jit_get_te_must_use_llvm_cpu(),
             torch.get_num_threads())

    @torch.jit.script
    def chains(x, y):
        z = torch.cumsum(torch.relu(x + y) * 2.0, 0)  # not fusible: two groups
        return torch.tanh(z * 0.5 * y * 0.25 + 1.0) * (z * 3.0) + y - x  # past 40 characters

    try:
        fusion_groups.switch_on_cpu_fuser(torch)
        torch.set_num_threads(1)
        x, y = torch.randn(4, 4), torch.randn(4, 4)
        with torch.no_grad():
            for _ in range(3):
                chains(x, y)
            graph = torch.jit.last_executed_optimized_graph()
            path = os.path.join(TMP, "fused.json")
            with torch.profiler.profile(record_shapes=True) as prof:
                chains(x, y)
            prof.export_chrome_trace(path)
        settings = fusion_groups.fuser_settings(torch)
    finally:
        c._jit_override_can_fuse_on_cpu(saved[0])
        c._jit_set_texpr_fuser_enabled(saved[1])
        c._jit_set_te_must_use_llvm_cpu(saved[2])
        torch.set_num_threads(saved[3])
    with open(path) as f:
        trace = json.load(f)
    fused = sorted(e["name"] for e in trace["traceEvents"] if str(e.get("name", "")).startswith("fused_"))
    groups = fusion_groups.groups_in(graph)
    assert sorted(g["name"] for g in groups) == fused, (fused, [g["name"] for g in groups])
    assert any(len(n) == 40 and n.rsplit("_", 1)[1].isdigit() for n in fused), fused  # one hashed
    assert "fused_add_relu_mul" in fused, fused
    section = fusion_groups.annotate(trace, graph, settings, "test")
    assert section["annotated"] == section["events"] == len(fused) and not section["unmatched"], section
    for e in trace["traceEvents"]:
        if str(e.get("name", "")).startswith("fused_"):
            assert e["args"]["Input Dims"] == [[4, 4]] * len(e["args"]["Input Dims"]), e
            assert set(e["args"]["Input type"]) == {"float"}, e
    assert all(g["graph"].startswith("graph(") and not g["dynamic_shapes"] for g in groups), groups
    assert settings["can_fuse_on_cpu"] and settings["texpr_fuser_enabled"], settings


@test
def test_the_cpu_fuser_leaves_bfloat16_and_float16_chains_unfused_and_the_capture_says_so():
    """What `cpu_unfused_dtypes` claims of torch, checked on this torch: BLOOM's GELU scripted
    alone, the CPU fuser on, forms a fusion group in float32 and none in float16 or (without
    LLVM) bfloat16; the function names exactly the dtypes left unfused."""
    c = torch._C
    saved = (c._jit_can_fuse_on_cpu(), c._jit_texpr_fuser_enabled(), c._jit_get_te_must_use_llvm_cpu())
    source = ("def gelu_{}(x):\n"
              "    return x * 0.5 * (1.0 + torch.tanh(0.79788456 * x * (1 + 0.044715 * x * x)))\n")
    groups = {}
    try:
        fusion_groups.switch_on_cpu_fuser(torch)
        for dtype in (torch.float32, torch.bfloat16, torch.float16):
            name = str(dtype).removeprefix("torch.")
            # A compilation unit of its own each: one profiling executor per dtype.
            fn = getattr(torch.jit.CompilationUnit(source.format(name)), "gelu_" + name)
            x = torch.randn(1, 5, 64).to(dtype)
            with torch.no_grad():
                for _ in range(3):
                    fn(x)
            groups[name] = fusion_groups.groups_in(torch.jit.last_executed_optimized_graph())
    finally:
        c._jit_override_can_fuse_on_cpu(saved[0])
        c._jit_set_texpr_fuser_enabled(saved[1])
        c._jit_set_te_must_use_llvm_cpu(saved[2])
    llvm = c._llvm_enabled()
    assert [g["name"] for g in groups["float32"]] == ["fused_mul_mul_mul_mu_5065363705190979294"], groups
    assert groups["float16"] == [], groups
    assert (groups["bfloat16"] == []) == (not llvm), (llvm, groups)
    one = lambda dtype: [torch.zeros(2, dtype=dtype)]  # noqa: E731
    assert fusion_groups.cpu_unfused_dtypes(torch, one(torch.float32) + one(torch.int64)) == []
    assert fusion_groups.cpu_unfused_dtypes(torch, one(torch.float16) * 2) == ["float16"]
    unfused = fusion_groups.cpu_unfused_dtypes(torch, one(torch.bfloat16) + one(torch.float16))
    assert unfused == (["float16"] if llvm else ["bfloat16", "float16"]), unfused
    assert fusion_groups.cpu_unfused_note([]) is None
    note = fusion_groups.cpu_unfused_note(["bfloat16"])
    assert "does not fuse ops on bfloat16" in note and "run here as aten ops" in note, note


def main():
    passed = failed = 0
    only = sys.argv[1:]
    for fn in TESTS:
        if only and not any(o in fn.__name__ for o in only):
            continue
        started = time.monotonic()
        try:
            fn()
            print(f"ok    {fn.__name__}  ({time.monotonic() - started:.1f} s)")
            passed += 1
        except Exception:
            print(f"FAIL  {fn.__name__}  (files in {TMP})\n{traceback.format_exc()}")
            failed += 1
    if not failed:
        shutil.rmtree(TMP, ignore_errors=True)  # kept on failure, for a look
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
