#!/usr/bin/env python3
"""Profile one forward step of a model into a Chrome trace (for `replay capture`).

  capture_trace.py (--model PATH.pt|PATH.pt2 | --zoo NAME) --out traces/NAME.json[.gz]
                   [--compile [default|reduce-overhead|max-autotune]]
                   [--seq-len 5] [--batch 1] [--device cpu|cuda|cuda:N]
                   [--warmup 3] [--seed 0] [--threads N] [--candidates 5]
                   [--input SPEC ...] [--time-runs R [--time-warmup W] [--time-only]]
                   [--execution-trace] [--fuse-on-cpu]

The model is a TorchScript file (.pt), a torch.export ExportedProgram (.pt2, run as its
`.module()`), or `--zoo NAME`, a model of scripts/zoo.py built eagerly with random weights.
Runs --warmup unprofiled steps, then profiles --candidates single steps (default 5), each in
its own profiler session with record_shapes=True, so every cpu_op event carries "Input
Dims", and keeps the trace of the step whose time is the median: one step on a busy machine
may be stretched by a preemption. Each step runs under a profiler schedule and prof.step(),
so the trace holds a real `ProfilerStep#N` span around it. Input ids are fixed
random integers in [0, vocab), vocab read from the model's token embedding; `--input SPEC`
(repeatable, one per model input) gives other inputs instead: `DTYPE[d0,d1,...]` with an
optional `:LO..HI` for integers, as `replay full --input` takes them.

--compile [MODE] compiles the model (a .pt2 or a zoo model: torch.compile does not compile
TorchScript) with torch.compile(mode=MODE) and Inductor's kernel profiling on, so each
generated C++ kernel is a CPU op `graph_N_cpp_fused_*` of the trace. Inductor's cache of the
run is kept in `inductor/` beside the trace (TORCHINDUCTOR_CACHE_DIR=inductor/cache, set before
torch is imported), and one more forward pass with every generated kernel wrapped records the
arguments each receives into `inductor/kernels.json` (see inductor_record.py). With
--time-runs R, the compiled model is then timed whole in this process, W untimed and R timed
passes, into `compiled_model_timing.json` beside the trace (compiled_timing.py): what
`replay compare --compile` measures the prediction against. --time-only (after such a capture
into the same folder) only compiles the model again, from the kept Inductor cache, and times
it into `compiled_model_timing_after.json`: compare's later half of the runs, after its
isolated replay.
--execution-trace also records a PyTorch Execution Trace (torch.profiler.ExecutionTraceObserver)
beside the trace: `NAME.et.json` for `NAME.json` (`.et.json.gz` for `.json.gz`). The observer
records every op's input values as it runs and slows each op several times over (bloom-tiny's
ops 5-30x on the CPU), so it does not run in the kept step: it records one more step of the same
input, profiled with Kineto too, and that step's record-function ids are copied onto the kept
step's ops, op for op, once both steps are checked to have run the same ops in the same order
on the same shapes (`replayExecutionTrace` in the trace says so). The observer also records
each integral input tensor's smallest and largest value (`tensor_range`, asked for by
ENABLE_PYTORCH_EXECUTION_TRACE_SAVE_INTEGRAL_TENSOR_RANGE): the index ranges replay draws from.
--fuse-on-cpu switches TorchScript's fuser on for the CPU (off by default; on a GPU it is on).
A TorchScript model's fusion groups (`fused_*` ops, recorded without inputs) are written into
the trace from the optimised graph TorchScript ran (fusion_groups.py): each group's subgraph,
input types and the fuser settings, as `replayFusionGroups`, which `replay isolated` replays.
Ops on float16 CPU tensors, or bfloat16 ones without LLVM, stay unfused: said, and recorded.
Exit code 2 on a missing/invalid model file or an unavailable device.
"""
import argparse
import gzip
import json
import os
import shutil
import sys
import tempfile
import warnings

# Kineto logs every profiler start/stop on stderr; only its errors are of use here. It reads
# the level when torch loads, so it is set before the import.
os.environ.setdefault("KINETO_LOG_LEVEL", "3")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compile_env  # noqa: E402  (torch-free)

if __name__ == "__main__":
    # Inductor's cache of a compiled capture goes beside the trace, from torch's import on.
    compile_env.set_cache_env_from_argv(sys.argv[1:])

import torch  # noqa: E402
from torch.profiler import ProfilerActivity, profile, schedule  # noqa: E402

import compiled_capture  # noqa: E402
import compiled_timing  # noqa: E402
import fusion_groups  # noqa: E402
import model_source  # noqa: E402
from script_io import UsageError, make_out_folder  # noqa: E402

# Each profiled step is its own profiler session on purpose (see --steps): torch's warning that a
# session clears its events at the end of its cycle says nothing the user needs.
warnings.filterwarnings("ignore", message=".*Profiler clears events at the end of each cycle")


def parse_device(name):
    try:
        dev = torch.device(name)
    except RuntimeError as e:
        raise UsageError(f"bad --device {name!r}: {e}")
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise UsageError(f"--device {name}: CUDA is not available here (torch.cuda.is_available() is false)")
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise UsageError(f"--device {name}: only {torch.cuda.device_count()} CUDA device(s)")
    elif dev.type != "cpu":
        raise UsageError(f"--device {name}: only cpu, cuda and cuda:N are supported")
    return dev


# Names a token embedding's weight ends with (as src/model/torchscript.rs looks for them).
TOKEN_EMBEDDINGS = ("word_embeddings.weight", "wte.weight", "shared.weight", "embed_tokens.weight")


def vocab_size(model, default=1000):
    for name, p in model.named_parameters():
        if name.endswith(TOKEN_EMBEDDINGS) and p.dim() == 2:
            return p.shape[0]
    return default


INPUT_DTYPES = {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16,
                "bfloat16": torch.bfloat16, "int64": torch.int64, "int32": torch.int32,
                "int16": torch.int16, "int8": torch.int8, "uint8": torch.uint8, "bool": torch.bool}
INPUT_SPEC_HELP = ("DTYPE[d0,d1,...] with an optional :LO..HI for integers, e.g. float32[1,3,224,224] "
                   "or int64[1,128]:0..50257; DTYPE is one of " + ", ".join(INPUT_DTYPES))


def parse_input_spec(text):
    """`int64[1,128]:0..50257` -> (dtype, [1, 128], (0, 50257)); the grammar of src/model/input_spec.rs."""
    def bad(why):
        return UsageError(f"bad input spec {text!r}: {why} (accepted: {INPUT_SPEC_HELP})")
    shape, _, rng = text.partition(":")
    name, bracket, rest = shape.partition("[")
    if not bracket:
        raise bad("no [sizes] after the dtype")
    if name.strip() not in INPUT_DTYPES:
        raise bad(f"unknown dtype {name.strip()!r}")
    dtype = INPUT_DTYPES[name.strip()]
    if not rest.rstrip().endswith("]"):
        raise bad("the sizes do not end with ]")
    inner = rest.rstrip()[:-1]
    sizes = []
    for s in (inner.split(",") if inner.strip() else []):
        if not s.strip().isdigit() or int(s) < 1:
            raise bad(f"size {s.strip()!r} is not a positive integer")
        sizes.append(int(s))
    integer = not dtype.is_floating_point and dtype != torch.bool
    bounds = None
    if rng:
        if not integer:
            raise bad("a range :LO..HI is for integer dtypes only")
        lo, dots, hi = rng.partition("..")
        try:
            bounds = (int(lo), int(hi))
        except ValueError:
            raise bad("the range is not LO..HI")
        if not dots or bounds[1] <= bounds[0]:
            raise bad("the range LO..HI is empty (HI must be above LO)")
    return dtype, sizes, bounds


def make_inputs(specs, vocab, batch, seq_len, seed):
    """The model's inputs: one tensor per spec, or token ids [batch, seq_len] without specs."""
    g = torch.Generator().manual_seed(seed)
    if not specs:
        return [torch.randint(0, vocab, (batch, seq_len), generator=g)]
    out = []
    for dtype, sizes, bounds in specs:
        if dtype == torch.bool:
            out.append(torch.rand(sizes, generator=g) < 0.5)
        elif dtype.is_floating_point:
            out.append(torch.randn(sizes, generator=g).to(dtype))
        else:
            lo, hi = bounds or (0, vocab)
            out.append(torch.randint(lo, hi, sizes, generator=g).to(dtype))
    return out


@torch.jit.script
def _op_mix(x: torch.Tensor, m: torch.Tensor, n: int) -> torch.Tensor:
    # Tiny tensors, so the time is the framework's, and the argument kinds a transformer's ops
    # record (several tensors, scalars, int lists), but no op that calls other ops: the
    # profiler's cost for nested ops lies inside their parent's span, which the replay
    # replaces, while the timeline takes this calibration out of the gaps between ops.
    for _ in range(n):
        y = torch.addcmul(x, x, x, value=0.5)
        y = torch.add(y, x, alpha=2.0)
        y = torch.sub(y, m, alpha=0.5)
        y = torch.maximum(y, x)
        x = torch.mul(y.view([4, 1]), m.view([4, 1])).view([1, 4])
    return x


def profiler_overhead_us_per_op(calls=1000, repeats=7):
    """The profiler's own host cost per recorded op (record_shapes=True), in microseconds.

    A TorchScript loop of tiny ops is timed with and without the profiler, alternately; the
    difference of the medians, divided by the ops the profiler recorded inside the loop, is
    what each op of the real trace carries on top of the work. The timeline model takes it out
    of the host gap before each op so that a prediction is for an unprofiled run. Calibrated
    on this loop, never on the model.
    """
    import time
    x, m = torch.zeros(1, 4), torch.ones(1, 4)
    _op_mix(x, m, 10)  # compile and warm up
    plain, profiled, ops = [], [], 1
    for _ in range(repeats):
        t0 = time.perf_counter()
        _op_mix(x, m, calls)
        plain.append(time.perf_counter() - t0)
        with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
            t0 = time.perf_counter()
            _op_mix(x, m, calls)
            profiled.append(time.perf_counter() - t0)
        ops = max(1, sum(1 for e in prof.events()
                         if e.cpu_parent is not None and e.cpu_parent.name == "_op_mix"))
    median = lambda v: sorted(v)[len(v) // 2]
    return max(0.0, (median(profiled) - median(plain)) * 1e6 / ops)


class QuietProfilerLog:
    """Holds back the profiler's C++ progress lines (STAGE/USDT, written straight to file
    descriptor 2 whatever KINETO_LOG_LEVEL says) and the harmless "gpuGetDeviceCount failed"
    of a CUDA build of torch on a GPU-less host; passes every other line on."""
    NOISE = ("STAGE:", "USDT:")

    def __enter__(self):
        sys.stderr.flush()
        self.saved = os.dup(2)
        self.log = tempfile.TemporaryFile(mode="w+b")
        os.dup2(self.log.fileno(), 2)
        return self

    def __exit__(self, *exc):
        sys.stderr.flush()
        os.dup2(self.saved, 2)
        os.close(self.saved)
        self.log.seek(0)
        for line in self.log.read().decode(errors="replace").splitlines():
            if line.startswith(self.NOISE) or "gpuGetDeviceCount failed" in line:
                continue
            # The ExecutionTraceObserver's own notes as it is switched on and off.
            if line.startswith("[W") and line.endswith("abling Execution Trace Observer"):
                continue
            print(line, file=sys.stderr)
        self.log.close()
        return False


class FirstCallChecked:
    """Calls a loaded model. Its very first call failing is the file's fault (it is TorchScript,
    but does not take the inputs given: token ids [batch, seq_len] unless --input says
    otherwise) and a usage error naming it; a later failure is not. Checking on the first real
    call adds no pass of its own, so --warmup 0 still profiles a cold model."""

    def __init__(self, model, path, given_inputs):
        self.model, self.path, self.ran = model, path, False
        self.given_inputs = given_inputs  # how the message names the inputs

    def __call__(self, *inputs):
        try:
            out = self.model(*inputs)
        except Exception as e:
            if self.ran:
                raise
            lines = [l.strip() for l in str(e).splitlines() if l.strip()]
            # An error inside the TorchScript interpreter names its cause on its last line.
            cause = lines[-1] if lines else type(e).__name__
            raise UsageError(f"{self.path} loads, but does not run on {self.given_inputs(inputs)}: "
                             f"{cause} (give the inputs it takes with --input)") from None
        self.ran = True
        return out


def profiler_step_seconds(path):
    """The duration of the trace's `ProfilerStep#N` span at `path` in seconds, or None.

    This is the step time `replay predict` and the trace self-check of `replay compare` read
    from the kept trace, so the candidates are ranked, and the kept one reported, by it: the
    host's clock around the model call alone misses the profiler's bookkeeping inside the span.
    """
    with open(path) as f:
        events = json.load(f).get("traceEvents", [])
    for e in events:
        if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#"):
            return float(e["dur"]) * 1e-6
    return None


# Asks PyTorch's ExecutionTraceObserver (2.5 on) for each integral input's value range.
ET_TENSOR_RANGE_ENV = "ENABLE_PYTORCH_EXECUTION_TRACE_SAVE_INTEGRAL_TENSOR_RANGE"


def execution_trace_path(trace_path):
    """`t.et.json` beside `t.json`, `t.et.json.gz` beside `t.json.gz`."""
    for ext in (".json.gz", ".json"):
        if trace_path.endswith(ext):
            return trace_path[: -len(ext)] + ".et" + ext
    return trace_path + ".et.json"


def profile_one_step(model, inputs, sync, activities, path, et_path=None):
    """Profiles one step into `path` and returns its time in seconds: the trace's own
    `ProfilerStep#N` span (the host's clock around the call where the trace has none).
    With `et_path`, an ExecutionTraceObserver records the same step there (the profiler
    starts and stops it with its recording, and finalizes the file when it exits).

    warmup=1 lets the profiler itself warm up on one step; only the next is recorded, and
    exported when its cycle ends. The step runs under prof.step(), so the trace holds a real
    `ProfilerStep#N` span around it.
    """
    import time
    seconds = 0.0
    observer = None
    if et_path is not None:
        from torch.profiler import ExecutionTraceObserver
        # Read when the observer registers: every node with an integral input tensor gets its
        # [min, max] (`tensor_range`). (Its sibling ..._SAVE_INTEGRAL_TENSOR_DATA dumps whole
        # tensors of the ops it names into files beside the trace; ranges are what replay uses.)
        os.environ[ET_TENSOR_RANGE_ENV] = "1"
        observer = ExecutionTraceObserver().register_callback(et_path)
    with profile(activities=activities, record_shapes=True, with_stack=False,
                 schedule=schedule(wait=0, warmup=1, active=1, repeat=1),
                 execution_trace_observer=observer,
                 on_trace_ready=lambda p: p.export_chrome_trace(path)) as prof:
        for i in range(2):
            t0 = time.perf_counter()
            model(*inputs)
            sync()  # keep the step's GPU work inside its ProfilerStep span
            if i == 1:
                seconds = time.perf_counter() - t0
            prof.step()
    return profiler_step_seconds(path) or seconds


def describe_inputs(inputs):
    """`[1, 16]` for token ids (the default), `float32[1,3,224,224], ...` otherwise."""
    if len(inputs) == 1 and inputs[0].dtype == torch.int64:
        return str(list(inputs[0].shape))
    return ", ".join(f"{str(t.dtype).removeprefix('torch.')}{list(t.shape)}".replace(" ", "") for t in inputs)


def time_compiled(args, model, inputs, dev, label, vocab, timed_in=compiled_timing.TIMED_IN):
    samples = compiled_timing.time_passes(model, inputs, dev, args.time_warmup, args.time_runs)
    return compiled_timing.timing_doc(
        samples, model=label, dev=dev, mode=args.compile, seq_len=args.seq_len, batch=args.batch,
        warmup=args.time_warmup, timed_in=timed_in,
        inputs=list(args.input) or [f"int64[{args.batch},{args.seq_len}]:0..{vocab}"])


def time_again(args, compiled, model, inputs, sync, dev, label, vocab):
    """--time-only: the model compiled again (from the capture's Inductor cache beside --out)
    and timed; no trace, no recording."""
    if not os.path.isfile(args.out):
        raise UsageError(f"--time-only: {args.out} does not exist; capture with --compile first")
    with torch.no_grad(), QuietProfilerLog():
        compiled.first_call(model, inputs, sync)
    timing = time_compiled(args, model, inputs, dev, label, vocab,
                           timed_in="a second Python process after the isolated replay")
    path = compiled_timing.timing_path(args.out, after=True)
    compiled_timing.write(path, timing)
    cache = "warm Inductor cache" if compiled.warm_cache else "cold Inductor cache"
    print(f"compiled again (mode {args.compile}) in {compiled.compile_seconds:.1f} s ({cache})")
    print(compiled_timing.summary(timing, path))


def capture(args):
    if args.seq_len < 1 or args.batch < 1 or args.warmup < 0 or args.candidates < 1:
        raise UsageError("--seq-len, --batch and --candidates must be at least 1, --warmup at least 0")
    if args.time_runs:
        if args.compile is None:
            raise UsageError("--time-runs times the torch.compile'd model: give --compile too")
        if args.time_runs < 1 or args.time_warmup < 0:
            raise UsageError("--time-runs must be at least 1, --time-warmup at least 0")
    if args.time_only and not args.time_runs:
        raise UsageError("--time-only times the compiled model again: give --compile and --time-runs")
    dev = parse_device(args.device)
    if args.fuse_on_cpu:
        if dev.type != "cpu":
            raise UsageError(f"--fuse-on-cpu switches TorchScript's fuser on for the CPU; --device is {dev}")
        fusion_groups.switch_on_cpu_fuser(torch)
    if args.threads is not None:
        if args.threads < 1:
            raise UsageError("--threads must be at least 1")
        # intra-op threads change CPU op times a lot; match what `replay full` uses
        torch.set_num_threads(args.threads)
    specs = [parse_input_spec(text) for text in args.input]
    if os.path.isdir(args.out):
        raise UsageError(f"--out {args.out} is a folder; give the name of the trace file to write")
    loaded = model_source.load(args.model, args.zoo, dev)
    if args.compile is not None and not loaded.compilable:
        raise UsageError(f"--compile: {args.model} is TorchScript, which torch.compile does not compile; "
                         "give a zoo model (--zoo NAME) or a torch.export ExportedProgram (.pt2, "
                         "`replay export --format pt2`)")
    vocab = loaded.vocab or vocab_size(loaded.module)
    inputs = [t.to(dev) for t in make_inputs(specs, vocab, args.batch, args.seq_len, args.seed)]
    model = FirstCallChecked(
        loaded.module, loaded.label,
        lambda given: (f"token ids {list(given[0].shape)}" if not specs
                       else f"input {describe_inputs(given)}"))
    compiled = None
    if args.compile is not None:
        with torch.no_grad():
            model(*inputs)  # eagerly first: inputs the model does not take are the user's error
        compiled = compiled_capture.CompiledRun(loaded.module, args.compile, args.out)
        model = compiled.module
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    if args.time_only:
        return time_again(args, compiled, model, inputs, sync, dev, loaded.label, vocab)

    out_dir = make_out_folder(args.out)
    timing_file = compiled_timing.timing_path(args.out)
    for earlier in (timing_file, compiled_timing.timing_path(args.out, after=True)):
        if compiled is not None and os.path.exists(earlier):
            os.remove(earlier)  # an earlier capture's, into this folder
    # Written next to the target and renamed, so a reader never sees a partial trace.
    tmps = []
    et_tmps = []
    et_out = execution_trace_path(args.out) if args.execution_trace else None
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if dev.type == "cuda" else [])
    try:
        with torch.no_grad(), QuietProfilerLog():
            if compiled is not None:
                compiled.first_call(model, inputs, sync)  # the compile happens here
            for _ in range(args.warmup):
                model(*inputs)
            sync()
            # One profiled step is one draw from a machine whose speed drifts (a preemption
            # inside it stretches the host gaps the timeline model reads). Several candidate
            # steps are profiled, each in its own session, and the median one is kept.
            step_seconds = []
            for _ in range(args.candidates):
                fd, tmp = tempfile.mkstemp(suffix=".json", dir=out_dir)
                os.close(fd)
                tmps.append(tmp)
                step_seconds.append(profile_one_step(model, inputs, sync, activities, tmp))
            # The optimised graph those steps ran, with TorchScript's fusion groups in it.
            optimised = (torch.jit.last_executed_optimized_graph()
                         if isinstance(loaded.module, torch.jit.ScriptModule) else None)
            if et_out is not None:
                # The observer slows every op several times over, so the kept step is profiled
                # without it and the Execution Trace is recorded in one more step of the same
                # input, with a Kineto trace of its own that carries the record-function ids.
                fd, et_kineto = tempfile.mkstemp(suffix=".json", dir=out_dir)
                os.close(fd)
                et_tmps.extend([et_kineto, et_kineto[: -len(".json")] + ".et.json"])
                profile_one_step(model, inputs, sync, activities, et_kineto, et_tmps[1])
        chosen = sorted(range(len(step_seconds)), key=lambda i: step_seconds[i])[len(step_seconds) // 2]
        tmp = tmps[chosen]
        if os.path.getsize(tmp) == 0:
            raise RuntimeError("the profiler wrote no trace")
        with QuietProfilerLog():
            overhead = profiler_overhead_us_per_op()
        with open(tmp) as f:
            trace = json.load(f)
        trace["replayProfilerOverheadUsPerOp"] = overhead
        if et_out is not None:
            with open(et_tmps[0]) as f:
                trace["replayExecutionTrace"] = copy_record_function_ids(json.load(f), trace, et_out)
        # After the ET's ids are copied: that compares the two steps' ops as recorded.
        fusion = fusion_groups.annotate(
            trace, optimised, fusion_groups.fuser_settings(torch),
            "torch.jit.last_executed_optimized_graph() after the profiled steps: each group's "
            "subgraph and input types; its events matched by name in execution order")
        unfused = fusion_groups.model_cpu_unfused(torch, loaded.module, inputs) if args.fuse_on_cpu else []
        if fusion is not None and unfused:
            fusion["cpu_unfused_dtypes"] = unfused
        if fusion is not None:
            trace["replayFusionGroups"] = fusion
        trace["replayCaptureCandidateStepsUs"] = [round(x * 1e6, 1) for x in step_seconds]
        trace["replayCaptureChosenCandidate"] = chosen
        if compiled is not None:
            trace["replayCompile"] = compiled.trace_note()
        with open(tmp, "w") as f:
            json.dump(trace, f)
        if args.out.endswith(".gz"):
            with open(tmp, "rb") as src, gzip.open(tmp + ".gz", "wb") as dst:
                shutil.copyfileobj(src, dst)
            os.replace(tmp + ".gz", args.out)
        else:
            os.replace(tmp, args.out)
        if et_out is not None:
            keep_execution_trace(et_tmps[1], et_out)
        timing = None
        if args.time_runs:
            timing = time_compiled(args, model, inputs, dev, loaded.label, vocab)
            compiled_timing.write(timing_file, timing)
        if compiled is not None:
            with torch.no_grad(), QuietProfilerLog():
                compiled.record_kernels(model, inputs, sync, dev)
    finally:
        for t in tmps + et_tmps:
            for leftover in (t, t + ".gz"):
                if os.path.exists(leftover):
                    os.remove(leftover)
    print(f"{args.out}  {os.path.getsize(args.out) / 1e6:.2f} MB  device {dev}  "
          f"input {describe_inputs(inputs)}  threads {torch.get_num_threads()}  "
          f"profiler overhead {overhead:.2f} us/op  "
          f"step {step_seconds[chosen] * 1e6:.1f} us (median of {len(step_seconds)} profiled)")
    if fusion is not None:
        print(f"fusion groups: {len(fusion['groups'])} in the optimised graph; "
              f"{fusion['annotated']} of {fusion['events']} fused op(s) of the trace given their inputs"
              + (f"; unmatched: {fusion['unmatched']}" if fusion["unmatched"] else ""))
    if unfused:
        print(fusion_groups.cpu_unfused_note(unfused))
    if et_out is not None:
        linked = trace["replayExecutionTrace"]
        print(f"{et_out}  execution trace of one more step of the same input; its "
              f"record-function ids copied onto the kept step's {linked['ops']} ops")
    if compiled is not None:
        print(compiled.summary())
    if timing is not None:
        print(compiled_timing.summary(timing, timing_file))


def _op_events(trace):
    """The trace's ops (`cpu_op` and `user_annotation`), in file order."""
    return [e for e in trace.get("traceEvents", [])
            if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "user_annotation")]


def copy_record_function_ids(et_step, kept, et_path):
    """Copies the record-function ids of `et_step` (the Kineto trace of the step the Execution
    Trace was recorded in) onto the ops of `kept` (the kept step, profiled without the observer),
    op for op, after checking that both steps ran the same ops, in the same order, on the same
    shapes: then `replay classify --execution-trace` links the kept step's ops to the ET's nodes.
    Returns the note written into the kept trace."""
    def key(e):
        args = e.get("args", {})
        name = e.get("name", "")
        # A step annotation is numbered per session (`ProfilerStep#1`); the ids are what counts.
        return (name.split("#")[0], json.dumps(args.get("Input Dims")))
    donors, ops = _op_events(et_step), _op_events(kept)
    if len(donors) != len(ops) or any(key(a) != key(b) for a, b in zip(donors, ops)):
        first = next((i for i, (a, b) in enumerate(zip(donors, ops)) if key(a) != key(b)),
                     min(len(donors), len(ops)))
        raise RuntimeError(
            f"the step profiled with the execution trace ran other ops than the kept step "
            f"({len(donors)} against {len(ops)} ops, first difference at op {first}); "
            "the model is not deterministic enough to link an execution trace to its trace")
    copied = 0
    for donor, op in zip(donors, ops):
        rf_id = donor.get("args", {}).get("Record function id")
        if isinstance(rf_id, int) and rf_id > 0:
            op.setdefault("args", {})["Record function id"] = rf_id
            copied += 1
    return {"file": os.path.basename(et_path), "ops": len(ops), "ids_copied": copied,
            "how": "recorded in one more step of the same input (the observer slows every op); "
                   "its Kineto ops' record-function ids copied onto this step's, op for op, "
                   "the two steps' op names and input shapes checked equal"}


def keep_execution_trace(tmp, out):
    """Moves the kept step's Execution Trace to `out` (gzipped for a `.gz` name)."""
    if not os.path.exists(tmp) or os.path.getsize(tmp) == 0:
        raise RuntimeError("the ExecutionTraceObserver wrote no execution trace")
    if out.endswith(".gz"):
        with open(tmp, "rb") as src, gzip.open(tmp + ".gz", "wb") as dst:
            shutil.copyfileobj(src, dst)
        os.replace(tmp + ".gz", out)
    else:
        os.replace(tmp, out)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--model", help="TorchScript model (.pt) or torch.export ExportedProgram (.pt2)")
    which.add_argument("--zoo", metavar="NAME", help="a model of the zoo (zoo.py), built eagerly with random weights")
    p.add_argument("--compile", nargs="?", const=compile_env.MODES[0], choices=compile_env.MODES,
                   metavar="MODE", help="torch.compile the model with this mode (default when given "
                   "alone; one of " + ", ".join(compile_env.MODES) + ") and record its generated "
                   "kernels in inductor/ beside the trace")
    p.add_argument("--out", required=True, help="trace file: .json, or .json.gz for gzip")
    p.add_argument("--seq-len", type=int, default=5)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N")
    p.add_argument("--warmup", type=int, default=3, help="unprofiled steps before the profiled one")
    p.add_argument("--seed", type=int, default=0, help="seed of the random input ids")
    p.add_argument("--candidates", type=int, default=5,
                   help="profile this many steps, each in its own session, and keep the median one")
    p.add_argument("--threads", type=int, help="torch intra-op threads (default: torch's own choice)")
    p.add_argument("--input", action="append", default=[], metavar="SPEC",
                   help="one model input instead of token ids (repeatable): " + INPUT_SPEC_HELP)
    p.add_argument("--time-runs", type=int, default=0, metavar="R",
                   help="with --compile: then time the compiled model whole, R timed passes, into "
                   "compiled_model_timing.json beside the trace")
    p.add_argument("--time-warmup", type=int, default=10, metavar="W",
                   help="untimed passes before --time-runs (default 10)")
    p.add_argument("--time-only", action="store_true",
                   help="after a capture with --compile into --out's folder: only compile again "
                   "(from its Inductor cache) and time, into compiled_model_timing_after.json")
    p.add_argument("--fuse-on-cpu", action="store_true",
                   help="switch TorchScript's fuser on for the CPU (NNC's texpr fuser), so a "
                   "TorchScript model's element-wise chains run as fusion groups as on a GPU (but not "
                   "on float16 tensors, nor bfloat16 ones where torch has no LLVM)")
    p.add_argument("--execution-trace", action="store_true",
                   help="also record the kept step's PyTorch Execution Trace beside the trace "
                   "(NAME.et.json), linked to it by record-function ids")
    args = p.parse_args(argv)
    try:
        capture(args)
    except UsageError as e:
        print(f"capture_trace: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
