"""Tests of `capture_trace.py --compile` (run by test_scripts.py, which registers them).

Real compiles on the CPU: a 2-block MLP with layer norm and gelu saved as a torch.export
ExportedProgram (.pt2), and bloom-tiny through --zoo. Each capture's trace must hold the
generated kernels as `graph_N_cpp_fused_*` ops, each of them a `trace_name` of kernels.json;
each kernel's Python-free library must load with ctypes and reproduce, on the recorded
layouts, what Inductor's own Python-binding kernel computes from the same inputs.
"""
import glob
import json
import os
import re
import shutil

import numpy as np
import torch

import compiled_timing
import inductor_cpp_lib
import inductor_record
import inductor_wrapper

HERE_SCRIPTS = os.path.dirname(os.path.abspath(__file__))

PROFILED_OP = re.compile(r"^graph_\d+_cpp_fused_\w+$")

# Under `make test`, REPLAY_TEST_SHARE is the run's scratch folder (emptied by the Makefile each
# run, never the user's Inductor cache), where the integration tests' one capture of compiled
# bloom-tiny leaves its Inductor cache (tests/integration/compiled_bloom_tiny.rs, SHARED_CACHE).
SHARED_BLOOM_TINY_CACHE = os.path.join("bloom-tiny-compiled", "inductor", "cache")


def seed_from_make_test(inductor_folder):
    """Copies the cache the integration tests left for this `make test` run, where there is one,
    into `inductor_folder`: a capture of the same model beside it then compiles from a warm
    cache instead of a cold one (a minute of C++ compiles). Returns whether it did."""
    share = os.environ.get("REPLAY_TEST_SHARE")
    cache = share and os.path.join(share, SHARED_BLOOM_TINY_CACHE)
    if not cache or not os.path.isdir(cache):
        return False
    shutil.copytree(cache, os.path.join(inductor_folder, "cache"))
    return True


class MLP(torch.nn.Module):
    def __init__(self, width=64, blocks=2):
        super().__init__()
        self.blocks = torch.nn.ModuleList(
            torch.nn.ModuleDict({"norm": torch.nn.LayerNorm(width), "up": torch.nn.Linear(width, 4 * width),
                                 "down": torch.nn.Linear(4 * width, width)}) for _ in range(blocks))

    def forward(self, x):
        for b in self.blocks:
            x = x + b["down"](torch.nn.functional.gelu(b["up"](b["norm"](x))))
        return x


def layout_tensor(desc, folder, generator):
    """A tensor of the recorded layout: its recorded values, else random contents."""
    dtype = getattr(torch, desc["dtype"])
    sizes, strides, offset = desc["sizes"], desc["strides"], desc["storage_offset"]
    extent = 1 + sum((n - 1) * s for n, s in zip(sizes, strides) if n > 0)
    if dtype.is_floating_point:
        base = torch.randn(offset + extent, generator=generator).to(dtype)
    else:
        base = torch.zeros(offset + extent, dtype=dtype)
    t = base.as_strided(sizes, strides, offset)
    if "values" in desc:
        t.copy_(torch.from_numpy(np.load(os.path.join(folder, desc["values"]))))
    return base, t


def make_args(call, folder, seed):
    g = torch.Generator().manual_seed(seed)
    bases, args = [], []
    for a in call["args"]:
        if "tensor" in a:
            base, t = layout_tensor(a["tensor"], folder, g)
            bases.append(base)
            args.append(t)
        else:
            (value,) = a.values()
            args.append(value)
    return bases, args


def check_compiled_capture(out, so):
    """The trace and inductor/ of one compiled capture; returns kernels.json."""
    folder = os.path.join(os.path.dirname(out), "inductor")
    assert "compiled (mode default)" in so, so
    with open(out) as f:
        trace = json.load(f)
    ops = {e["name"] for e in trace["traceEvents"] if e.get("cat") == "cpu_op"}
    generated = {n for n in ops if PROFILED_OP.match(n)}
    assert generated, sorted(ops)
    assert trace["replayCompile"]["mode"] == "default" and trace["replayCompile"]["compile_seconds"] > 0
    with open(os.path.join(folder, "kernels.json")) as f:
        doc = json.load(f)
    assert (doc["format"], doc["version"], doc["device"], doc["mode"]) == \
        ("replay-inductor-kernels", 1, "cpu", "default"), {k: doc[k] for k in ("format", "version", "device")}
    assert doc["torch"] == torch.__version__.split("+")[0]
    names = {k["trace_name"] for k in doc["kernels"]}
    assert generated <= names, ("trace ops without a recorded kernel", sorted(generated - names))
    # The wrapper between the kernels, timed with every kernel a no-op: every generated kernel of
    # the pass stubbed, enough passes, the spread in order, and said in the capture's summary.
    w = doc["wrapper"]
    assert w["usable"] and w["why_not_usable"] is None and w["graph_breaks"] == 0, w
    assert w["kernels_stubbed"] >= len(names) and w["externs_stubbed"] >= 1, (w, sorted(names))
    assert w["runs"] >= 20 and 0 < w["p10_us"] <= w["median_us"] <= w["p90_us"], w
    assert "its wrapper between kernels" in so and "every kernel a no-op" in so, so
    # On the CPU the figure counted is the real passes' less their kernel calls.
    assert w["method"] == inductor_wrapper.CLOCKED_METHOD and "real passes less their kernel calls" in so, so
    assert w["kernel_calls_clocked"] >= len(names) and w["stubbed_median_us"] > 0, (w, sorted(names))
    assert names <= generated, ("recorded kernels the trace does not hold", sorted(names - generated))
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(folder, "cache")  # Inductor's own bindings
    from torch._inductor.codecache import CppPythonBindingsCodeCache
    for k in doc["kernels"]:
        assert k["kind"] == "inductor_cpp" and k["symbol"] == "replay_entry" and k["calls"], k["name"]
        assert k["trace_name"] == f"graph_{k['graph']}_{k['name']}", k["trace_name"]
        with open(os.path.join(folder, k["kernel_source"])) as f:
            cpp = f.read()
        assert "Python.h" not in cpp and f'"{k["trace_name"]}"' in cpp, k["kernel_source"]
        lib = os.path.join(folder, k["library"])
        assert inductor_cpp_lib.python_free_problems(lib) == "", inductor_cpp_lib.python_free_problems(lib)
        argtypes, source = inductor_record.cpp_bindings(os.path.join(folder, k["source"]))[k["name"]]
        # The library's source: the kernel as Inductor wrote it, then replay's uniform entry.
        entry = inductor_cpp_lib.entry_point(argtypes)
        assert argtypes == k["arg_types"] and inductor_cpp_lib.kernel_only(source) + entry == cpp, k["name"]
        binding = CppPythonBindingsCodeCache.load_pybinding(argtypes, source)
        main_cpp = inductor_cpp_lib.main_cpp_of(binding)
        with open(main_cpp) as f:
            assert inductor_cpp_lib.kernel_only(f.read()) + entry == cpp, main_cpp
        # The premise: what Inductor loads needs Python, so replay cannot dlopen it.
        inductor_so = binding.__self__.__file__
        assert any(s.startswith("Py") for s in inductor_cpp_lib.dynamic_symbols(inductor_so, True)), inductor_so
        handle = inductor_cpp_lib.load(lib)
        for n, call in enumerate(k["calls"]):
            assert call["count"] >= 1 and len(call["args"]) == len(argtypes), call
            ours_bases, ours = make_args(call, folder, seed=n)
            entry_bases, entry = make_args(call, folder, seed=n)
            theirs_bases, theirs = make_args(call, folder, seed=n)
            inductor_cpp_lib.call(handle, argtypes, ours)
            inductor_cpp_lib.call_entry(handle, argtypes, entry)  # the way replay calls it
            binding(*theirs)
            for i, (a, b, c) in enumerate(zip(ours_bases, theirs_bases, entry_bases)):
                assert torch.equal(a, b), (k["name"], n, i, (a.double() - b.double()).abs().max())
                assert torch.equal(c, b), (k["name"], n, i, "replay_entry", (c.double() - b.double()).abs().max())
    return doc


def tests(tmp, cli, run_script):
    import capture_trace

    def compiled_mlp_pt2_capture_records_every_generated_kernel():
        model = MLP().eval()
        x = torch.randn(4, 64)
        pt2 = os.path.join(tmp, "compile", "mlp.pt2")
        os.makedirs(os.path.dirname(pt2), exist_ok=True)
        torch.export.save(torch.export.export(model, (x,)), pt2)
        out = os.path.join(tmp, "compile", "mlp", "t.json")
        rc, so, se = run_script("capture_trace.py", "--model", pt2, "--input", "float32[4,64]",
                                "--compile", "--warmup", 1, "--candidates", 1, "--out", out)
        assert rc == 0, se
        doc = check_compiled_capture(out, so)
        fused = {k["name"] for k in doc["kernels"]}
        assert any("gelu" in n for n in fused) and any("layer_norm" in n for n in fused), fused

    def the_wrapper_is_timed_without_its_kernels_and_they_are_put_back():
        """inductor_wrapper in this process on an MLP whose kernels dominate its forward pass:
        with every kernel a no-op the pass is far quicker than the real one (the kernels really
        did not run), the extern kernels' outputs keep the wrapper going, and afterwards every
        kernel is back: the compiled model computes what the eager one does."""
        import time
        cache = os.path.join(tmp, "compile", "inproc-cache")
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache
        torch.manual_seed(0)
        model = MLP(width=512, blocks=2).eval()
        x = torch.randn(256, 512)
        compiled = torch.compile(model)
        with torch.no_grad():
            expected = model(x)
            compiled(x)

            def real_median():
                samples = []
                for _ in range(15):
                    t0 = time.perf_counter_ns()
                    compiled(x)
                    samples.append((time.perf_counter_ns() - t0) / 1000.0)
                return sorted(samples)[7]
            before = real_median()
            w = inductor_wrapper.time_wrapper(cache, compiled, (x,), lambda: None)
            real = inductor_wrapper.time_wrapper(cache, compiled, (x,), lambda: None,
                                                 host_synchronous=True)
            after = real_median()
            got = compiled(x)
        assert w["usable"] and w["kernels_stubbed"] >= 2 and w["externs_stubbed"] >= 1, w
        assert w["method"] == inductor_wrapper.METHOD and "kernel_calls_clocked" not in w, w
        # Two blocks of two 512x2048 GEMMs on 256 rows: milliseconds of kernels on any CPU,
        # against tens of microseconds of wrapper.
        assert w["median_us"] < 0.25 * min(before, after), (w, before, after)
        # The real passes less their kernel calls (the CPU's figure): every kernel and extern
        # call of a pass clocked (the four GEMMs at least), their milliseconds taken out.
        assert real["method"] == inductor_wrapper.CLOCKED_METHOD and real["usable"], real
        assert real["kernel_calls_clocked"] >= 4 and real["runs"] >= 20, real
        assert 0 < real["stubbed_median_us"] < 0.25 * min(before, after), real
        assert 0 < real["median_us"] < 0.25 * min(before, after), (real, before, after)
        torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-4)

    def the_wrapper_stubs_fallback_kernels_called_through_torch_ops():
        """A fallback kernel the generated code calls through `torch.ops` (an encoder layer's fast
        path, `aten._transformer_encoder_layer_fwd`, as in the zoo's bert-base) is stubbed like an
        extern kernel: nothing is left real, the wrapper is usable, and afterwards the compiled
        layer computes what the eager one does."""
        cache = os.path.join(tmp, "compile", "inproc-ops-cache")
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache
        torch.manual_seed(0)

        class Encoder(torch.nn.Module):  # a generated kernel before the layer, as bert's embeddings
            def __init__(self):
                super().__init__()
                self.norm = torch.nn.LayerNorm(64)
                self.layer = torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128,
                                                              batch_first=True)

            def forward(self, x):
                return self.layer(self.norm(x * 2.0 + 1.0))
        layer = Encoder().eval()
        x = torch.randn(1, 5, 64)
        compiled = torch.compile(layer)
        with torch.no_grad():
            expected = layer(x)
            compiled(x)
            sources = []
            for mod in inductor_record.output_modules(cache):
                with open(mod.__file__) as f:
                    sources.append(f.read())
            calls = [c for s in sources for c in inductor_wrapper.TORCH_OPS_CALL.findall(s)]
            # The path under test: the generated code calls the layer through torch.ops.
            assert ("aten", "_transformer_encoder_layer_fwd", "default") in calls, calls
            w = inductor_wrapper.time_wrapper(cache, compiled, (x,), lambda: None, max_runs=200)
            got = compiled(x)
        assert w["usable"] and w["torch_ops_calls_left_real"] == 0, w
        assert w["externs_stubbed"] >= 1 and w["kernels_stubbed"] >= 1, w
        torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-4)

    def compiled_zoo_bloom_tiny_capture_keeps_the_token_ids():
        out = os.path.join(tmp, "compile", "bloom", "t.json")
        # Nothing here asserts on a cold compile (the integration test that left the cache does),
        # and the warm captures below are warm either way.
        seeded = seed_from_make_test(os.path.join(tmp, "compile", "bloom", "inductor"))
        rc, so, se = run_script("capture_trace.py", "--zoo", "bloom-tiny", "--compile", "--seq-len", 5,
                                "--warmup", 1, "--candidates", 1, "--time-runs", 4, "--time-warmup", 1,
                                "--out", out)
        assert rc == 0, se
        assert ("warm Inductor cache" if seeded else "cold Inductor cache") in so, (seeded, so)
        doc = check_compiled_capture(out, so)
        # The compiled model timed whole in this process, beside the trace.
        with open(compiled_timing.timing_path(out)) as f:
            timing = json.load(f)
        assert (timing["model_format"], timing["compile_mode"], timing["runs"], timing["warmup"]) == \
            ("torch_compile", "default", 4, 1), timing
        assert timing["inputs"] == [f"int64[1,5]:0..{zoo_vocab('bloom-tiny')}"], timing["inputs"]
        assert len(timing["samples_us"]) == 4 and min(timing["samples_us"]) > 0, timing["samples_us"]
        assert "timed the compiled model in this process: median" in so, so
        # --time-only: compiled again from the kept cache in a process of its own, and timed.
        rc, so, se = run_script("capture_trace.py", "--zoo", "bloom-tiny", "--compile", "--seq-len", 5,
                                "--time-runs", 2, "--time-warmup", 1, "--time-only", "--out", out)
        assert rc == 0 and "compiled again (mode default)" in so and "warm Inductor cache" in so, (so, se)
        with open(compiled_timing.timing_path(out, after=True)) as f:
            after = json.load(f)
        assert (after["runs"], after["timed_in"]) == (2, "a second Python process after the isolated replay"), after
        with open(compiled_timing.timing_path(out)) as f:
            assert json.load(f) == timing, "the capture's own timing is left as it was"
        folder = os.path.join(os.path.dirname(out), "inductor")
        ids = capture_trace.make_inputs([], zoo_vocab("bloom-tiny"), 1, 5, 0)[0]
        saved = [np.load(os.path.join(folder, a["tensor"]["values"]))
                 for k in doc["kernels"] for c in k["calls"] for a in c["args"]
                 if "tensor" in a and "values" in a["tensor"]]
        assert any(v.dtype == np.int64 and v.shape == (1, 5) and (v == ids.numpy()).all() for v in saved), \
            [(v.dtype, v.shape) for v in saved]
        # A second capture into the same folder finds Inductor's cache warm and says so.
        shutil.rmtree(os.path.join(folder, "values"))
        rc, so, se = run_script("capture_trace.py", "--zoo", "bloom-tiny", "--compile", "default",
                                "--warmup", 0, "--candidates", 1, "--out", out)
        assert rc == 0 and "warm Inductor cache" in so, (so, se)
        check_compiled_capture(out, so)
        # Not timed this time: the earlier capture's timings are not left to be read as this one's.
        assert not os.path.exists(compiled_timing.timing_path(out))
        assert not os.path.exists(compiled_timing.timing_path(out, after=True))

    def compile_bad_input_exits_2():
        ts = os.path.join(tmp, "tiny.pt")
        if not os.path.exists(ts):
            import export_model
            cli(export_model.main, "--model", "bloom-tiny", "--out", ts)
        fake_pt2 = os.path.join(tmp, "compile", "torchscript.pt2")
        os.makedirs(os.path.dirname(fake_pt2), exist_ok=True)
        shutil.copy(ts, fake_pt2)
        text_pt2 = os.path.join(tmp, "compile", "text.pt2")
        with open(text_pt2, "w") as f:
            f.write("not a zip")
        out = os.path.join(tmp, "compile", "bad", "t.json")
        cases = [
            (["--zoo", "bloom-tiny", "--compile", "bogus"], "argument --compile: invalid choice: 'bogus'"),
            (["--model", fake_pt2, "--compile"], f"{fake_pt2} is not a torch.export ExportedProgram"),
            (["--model", text_pt2], f"{text_pt2} is not a torch.export ExportedProgram (.pt2): not a zip"),
            (["--model", ts, "--compile"], "is TorchScript, which torch.compile does not compile"),
            (["--zoo", "bloom-7b", "--compile"], "--zoo bloom-7b: unknown model (known: bert-base"),
            (["--zoo", "bloom-tiny", "--model", ts], "not allowed with argument"),
            (["--zoo", "bloom-tiny", "--time-runs", 5], "--time-runs times the torch.compile'd model: give --compile"),
            (["--zoo", "bloom-tiny", "--compile", "--time-runs", -1], "--time-runs must be at least 1"),
            (["--zoo", "bloom-tiny", "--compile", "--time-only"], "--time-only times the compiled model again"),
        ]
        for argv, msg in cases:
            rc, so, se = cli(capture_trace.main, *argv, "--candidates", 1, "--out", out)
            assert rc == 2 and msg in se, (argv, rc, se)
            if "bogus" in argv:
                assert all(mode in se for mode in ("default", "reduce-overhead", "max-autotune")), se
        assert not os.path.exists(os.path.join(tmp, "compile", "bad")), "nothing written on bad input"

    def triton_recording_from_a_stand_in_launcher_without_a_gpu():
        """No GPU here: the Triton path of kernels.json has never run on a real launch. This
        checks what can be without one, on stand-ins shaped like torch 2.11's CachingAutotuner
        and launcher: the signature without constexprs, the grid from torch's own GridExpr, the
        cubin written out, integer arguments' values kept."""
        from types import SimpleNamespace
        import inductor_triton
        launcher = SimpleNamespace(
            config={"XBLOCK": 128}, global_scratch=None, profile_scratch=None,
            bin=SimpleNamespace(asm={"cubin": b"\x7fELF-stand-in"},
                                metadata=SimpleNamespace(name="triton_poi_fused_add_0", num_warps=4, shared=0)))
        autotuner = SimpleNamespace(
            triton_meta={"signature": {"in_ptr0": "*i64", "out_ptr0": "*fp32", "xnumel": "i32",
                                       "XBLOCK": "constexpr"}},
            inductor_meta={"grid_type": "Grid1D"}, launchers=[launcher])
        folder = os.path.join(tmp, "compile", "triton")
        os.makedirs(os.path.join(folder, "replay"), exist_ok=True)
        os.makedirs(os.path.join(folder, "values"), exist_ok=True)
        rec = inductor_record.KernelRecord("triton_poi_fused_add_0", "triton_poi_fused_add_0", "triton", None, "x.py")
        ids, out = torch.arange(1000), torch.empty(1000)
        for _ in range(2):
            call = inductor_triton.record_launch(rec, autotuner, (ids, out, 1000))
            inductor_triton.launched(rec, autotuner, call, (ids, out, 1000))
        rec.fields = inductor_triton.kernel_fields(rec, folder)
        entry = rec.entry(folder)
        assert entry["signature"] == ["*i64", "*fp32", "i32"], entry
        assert (entry["function"], entry["num_warps"], entry["shared_mem"]) == ("triton_poi_fused_add_0", 4, 0), entry
        with open(os.path.join(folder, entry["cubin"]), "rb") as f:
            assert f.read() == b"\x7fELF-stand-in"
        (call,) = entry["calls"]
        assert call["count"] == 2 and call["grid"] == [8, 1, 1] and call["args"][2] == {"int": 1000}, call
        saved = np.load(os.path.join(folder, call["args"][0]["tensor"]["values"]))
        assert (saved == ids.numpy()).all()

    def triton_launch_fields_from_the_kept_cache_of_the_h200_capture():
        """The Triton cache the first GPU run kept (H200, torch 2.11, Triton 3.6; the fixture
        crates/core/tests/data/compiled/h200_bloom_tiny): each cubin's folder is the base32 of
        its metadata's hash (what a static launcher's `cache_hash` names), and the fields come
        from Triton's metadata beside the cubin of that folder."""
        from types import SimpleNamespace
        import inductor_triton
        folder = os.path.join(os.path.dirname(HERE_SCRIPTS), "crates", "core", "tests", "data",
                              "compiled", "h200_bloom_tiny", "inductor")
        metas = sorted(glob.glob(os.path.join(folder, "cache", "triton", "0", "*", "*.json")))
        assert len(metas) == 17, metas
        for path in metas:
            with open(path) as f:
                meta = json.load(f)
            assert inductor_triton.path_key(meta["hash"]) == os.path.basename(os.path.dirname(path)), path
        # One build: found by name alone.
        one = "triton_poi_fused_cumsum_mul_sub_unsqueeze_view_1"
        fields = inductor_triton.cache_fields(folder, one)
        assert fields["function"] == one and fields["cubin"].startswith("cache/triton/0/"), fields
        assert fields["cubin"].endswith(one + ".cubin") and os.path.isfile(os.path.join(folder, fields["cubin"]))
        assert (fields["num_warps"], fields["num_ctas"], fields["arch"]) == (1, 1, 90), fields
        assert (fields["global_scratch_size"], fields["profile_scratch_size"]) == (0, 0), fields
        assert fields["cache_hash"] == fields["cubin"].split("/")[3], fields
        # Two autotuned builds: only the launcher's cache_hash settles which.
        two = "triton_per_fused_add_addmm_native_layer_norm_view_5"
        assert inductor_triton.cache_fields(folder, two) == {}
        wide = "HIE3ORQADH7X55PJ3GFAMAFHDDSWWN3CVZZQ2437QSU3UE5OGQYQ"
        launcher = SimpleNamespace(config={"XBLOCK": 8}, cache_hash=wide, shared=1024)
        rec = inductor_record.KernelRecord(two, two, "triton", None, "x.py")
        rec.signature, rec.launcher = [("in_ptr0", "*fp32"), ("xnumel", "i32")], launcher
        fields = inductor_triton.kernel_fields(rec, folder)
        assert fields["cubin"] == f"cache/triton/0/{wide}/{two}.cubin", fields
        assert (fields["shared_mem"], fields["num_warps"], fields["cache_hash"]) == (1024, 2, wide), fields
        assert fields["signature"] == ["*fp32", "i32"] and "launcher_args" not in fields, fields
        # A hash the cache does not hold is kept for the reader, with no launch data guessed.
        launcher.cache_hash = "NOTINTHECACHE"
        fields = inductor_triton.kernel_fields(rec, folder)
        assert fields["cache_hash"] == "NOTINTHECACHE" and "cubin" not in fields, fields


    def compiled_timing_times_each_pass_after_the_warmups():
        """The protocol on a model whose time is known: each pass sleeps 2 ms and counts itself."""
        import time

        calls = []

        def model(x):
            calls.append(torch.is_grad_enabled())
            time.sleep(0.002)
            return x

        samples = compiled_timing.time_passes(model, [torch.zeros(1)], torch.device("cpu"), 3, 5)
        assert len(calls) == 8 and not any(calls), calls  # 3 untimed + 5 timed, under no_grad
        assert len(samples) == 5 and all(2000 <= s < 200_000 for s in samples), samples
        doc = compiled_timing.timing_doc([300.0, 100.0, 200.0, 400.0], model="m.pt2", dev=torch.device("cpu"),
                                         mode="max-autotune", inputs=["float32[4,64]"], seq_len=5, batch=1,
                                         warmup=3)
        assert (doc["median_us"], doc["min_us"], doc["max_us"], doc["runs"]) == (250.0, 100.0, 400.0, 4), doc
        assert abs(doc["p10_us"] - 130.0) < 1e-9 and abs(doc["p90_us"] - 370.0) < 1e-9, doc
        assert doc["samples_us"] == [300.0, 100.0, 200.0, 400.0], "in the order they were taken"
        assert doc["timer"] == "monotonic clock (time.perf_counter_ns)" and doc["compile_mode"] == "max-autotune"
        # The fields replay's FullModelTiming requires (crates/core/src/results/full_model.rs).
        required = {"model", "device", "seq_len", "batch", "warmup", "runs", "threads", "timer", "mean_us",
                    "median_us", "min_us", "max_us", "std_us", "p10_us", "p90_us", "rse_median", "samples_us"}
        assert required <= set(doc), sorted(required - set(doc))
        path = compiled_timing.timing_path(os.path.join(tmp, "compile", "timing", "t.json"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        compiled_timing.write(path, doc)
        with open(path) as f:
            assert json.load(f) == doc
        assert not os.path.exists(path + ".tmp")

    return [compiled_timing_times_each_pass_after_the_warmups,
            compiled_mlp_pt2_capture_records_every_generated_kernel,
            the_wrapper_is_timed_without_its_kernels_and_they_are_put_back,
            the_wrapper_stubs_fallback_kernels_called_through_torch_ops,
            compiled_zoo_bloom_tiny_capture_keeps_the_token_ids, compile_bad_input_exits_2,
            triton_recording_from_a_stand_in_launcher_without_a_gpu,
            triton_launch_fields_from_the_kept_cache_of_the_h200_capture]


def zoo_vocab(name):
    import zoo
    return zoo.MODELS[name].vocab_size
