"""The host time of a torch.compile'd model's generated wrapper: what runs between its kernels.

Inside a compiled region the profiler records the extern kernels (`aten::addmm`) and, with
`cpp.enable_kernel_profile`, each generated C++ kernel; what is left is Python and C++ glue
that no op covers: Dynamo's guards, AOTAutograd's runtime wrappers, the generated `call()`
allocating buffers (`empty_strided_cpu`), reinterpreting and freeing them. `replay` cannot
replay that, and in the trace it is inflated by the profiler. It is measured here without the
profiler: the compiled model's forward pass timed with every kernel made a no-op, so that what
is left is the wrapper alone.

- A generated C++ kernel (`cpp_fused_*`, a Python binding that returns None) becomes a Python
  function that returns None; a Triton kernel's `run` one that launches nothing.
- An extern kernel (`extern_kernels.addmm(..., out=buf0)`, `aten.convolution.default(...)`)
  returns what it returned in one recorded pass, in call order (its `out=` when it has one),
  without computing anything: the wrapper goes on with tensors of the right shapes.
- A call through `torch.ops.NS.OP[.OVERLOAD](...)` spelled out in the generated code (a fallback
  kernel such as `aten._transformer_encoder_layer_fwd`) is an extern kernel too: the module's
  `torch` becomes a namespace holding the real values of every `torch.X` the code reads (as quick
  to look up as the module's) with those calls stubbed under `ops`. A call left real (one op
  called both with and without an overload) is counted; a wrapper whose timing holds any, or
  that ran eager code between graph breaks (ops the trace records and replay replays), is
  marked not usable: replay then keeps it as unseen.

On the CPU, where a kernel call returns when its work is done, the figure counted is the real
pass's instead: the compiled forward pass timed unprofiled with every generated kernel and
extern call wrapped to read the host clock at entry and exit, less the time inside the calls and
the clock's own cost outside them (measured on a clocked no-op). That counts what the no-op pass
skips (an extern call's Python binding and the tensor it returns, the buffers freed after it:
6-7.5 us a gap against the no-op pass's 2.3 on gpt2-small). One pass holds both the whole and
its kernels, so a machine that changes speed between passes cannot open a gap between them. On
a GPU a kernel call returns at its launch and the pass ends at a synchronisation, so the
difference would hold the device's time: there the no-op pass is the figure.
`stubbed_median_us` keeps the no-op pass's median beside the clocked one.

`time_wrapper` returns the `wrapper` section of `inductor/kernels.json`.
"""
import re
import statistics
import time
import types

import inductor_record

METHOD = ("the compiled forward pass timed unprofiled with every generated kernel a no-op and every "
          "extern kernel returning its recorded output")
CLOCKED_METHOD = ("the compiled forward pass timed unprofiled with its generated kernel and extern calls "
                  "clocked at entry and exit, less the time inside them and the clock's own cost")
EXTERN_CALL = re.compile(r"\bextern_kernels\.(\w+)\(")
ATEN_CALL = re.compile(r"(?<![\w.])aten\.(\w+)\.(\w+)\(")
TORCH_OPS_CALL = re.compile(r"(?<![\w.])torch\.ops\.(\w+)\.(\w+)(?:\.(\w+))?\(")
TORCH_ATTR = re.compile(r"(?<![\w.])torch\.(\w+)")


class Recorded:
    """The outputs of the extern kernels of one recorded pass, in call order."""

    def __init__(self):
        self.outputs = []
        self.replaying = False
        self.next = 0

    def start_replay(self):
        self.replaying = True
        self.next = 0

    def stub(self, real):
        def extern(*args, **kwargs):
            out = kwargs.get("out")
            if self.replaying and (out is not None or self.outputs):
                if out is not None:
                    return out
                # The k-th extern call without `out=` of every pass is the same call.
                result = self.outputs[self.next % len(self.outputs)]
                self.next += 1
                return result
            result = real(*args, **kwargs)
            if out is None:
                self.outputs.append(result)
            return result
        return extern


class Namespace(types.SimpleNamespace):
    """Pre-bound stubs as plain attributes (as fast to look up as the original's); anything
    else falls through to the real object."""

    def __init__(self, real, **stubs):
        super().__init__(**stubs)
        object.__setattr__(self, "_real", real)

    def __getattr__(self, name):  # only for names not bound above
        return getattr(object.__getattribute__(self, "_real"), name)


def _noop(*args, **kwargs):
    return None


class PatchedKernels:
    """Every kernel of the loaded output code under `cache_root` replaced (`kernel` for a
    generated one, `extern` for an extern kernel or a `torch.ops` call), and put back
    afterwards."""

    def __init__(self, cache_root):
        self.cache_root = cache_root
        self.restore = []  # (object, attribute, original or None for an instance attribute)
        self.kernels = self.externs = self.torch_ops_calls = 0

    def kernel(self, real):
        raise NotImplementedError

    def extern(self, real):
        raise NotImplementedError

    def _set(self, obj, name, value, shadow=False):
        self.restore.append((obj, name, None if shadow else getattr(obj, name)))
        setattr(obj, name, value)

    def install(self):
        for mod in inductor_record.output_modules(self.cache_root):
            with open(mod.__file__) as f:
                source = f.read()
            for name, value in list(vars(mod).items()):
                if inductor_record.CPP_KERNEL.match(name) and callable(value):
                    self._set(mod, name, self.kernel(value))
                    self.kernels += 1
                elif (inductor_record.TRITON_KERNEL.match(name) and hasattr(value, "run")
                      and hasattr(value, "launchers")):
                    self._set(value, "run", self.kernel(value.run), shadow=True)
                    self.kernels += 1
            real = getattr(mod, "extern_kernels", None)
            if real is not None:
                names = sorted(set(EXTERN_CALL.findall(source)))
                self._set(mod, "extern_kernels", Namespace(
                    real, **{n: self.extern(getattr(real, n)) for n in names}))
                self.externs += len(names)
            real = getattr(mod, "aten", None)
            if real is not None:
                packets = {}
                for packet, overload in set(ATEN_CALL.findall(source)):
                    packets.setdefault(packet, {})[overload] = self.extern(
                        getattr(getattr(real, packet), overload))
                self._set(mod, "aten", Namespace(real, **{
                    p: Namespace(getattr(real, p), **o) for p, o in packets.items()}))
                self.externs += sum(len(o) for o in packets.values())
            real = getattr(mod, "torch", None)
            calls = TORCH_OPS_CALL.findall(source)
            if real is not None and calls:
                self._stub_torch_ops(mod, real, source, calls)
        return self

    def _stub_torch_ops(self, mod, real, source, calls):
        """The module's `torch` as a namespace whose `ops.NS.OP[.OVERLOAD]` calls of `calls`
        replay their recorded outputs; every other `torch.X` the source reads is bound to the
        real value."""
        forms = {}  # (ns, op) -> the overloads called, "" for the packet called directly
        for ns, op, overload in calls:
            forms.setdefault((ns, op), set()).add(overload)
        namespaces = {}
        for (ns, op), overloads in forms.items():
            packet = getattr(getattr(real.ops, ns), op)
            if "" in overloads and len(overloads) > 1:
                # Both `torch.ops.NS.OP(` and `torch.ops.NS.OP.X(`: one name cannot be both a
                # stub and a namespace; left real, and counted.
                self.torch_ops_calls += sum(1 for c in calls if c[:2] == (ns, op))
                continue
            if overloads == {""}:
                namespaces.setdefault(ns, {})[op] = self.extern(packet)
                self.externs += 1
            else:
                namespaces.setdefault(ns, {})[op] = Namespace(packet, **{
                    o: self.extern(getattr(packet, o)) for o in overloads})
                self.externs += len(overloads)
        ops = Namespace(real.ops, **{ns: Namespace(getattr(real.ops, ns), **opmap)
                                     for ns, opmap in namespaces.items()})
        reads = {a for a in TORCH_ATTR.findall(source) if a != "ops" and hasattr(real, a)}
        self._set(mod, "torch", Namespace(real, ops=ops, **{a: getattr(real, a) for a in reads}))

    def uninstall(self):
        for obj, name, original in reversed(self.restore):
            if original is None:
                delattr(obj, name)
            else:
                setattr(obj, name, original)
        self.restore = []


class NoOpKernels(PatchedKernels):
    """Every generated kernel a no-op, every extern kernel replaying its recorded output."""

    def __init__(self, cache_root):
        super().__init__(cache_root)
        self.recorded = Recorded()

    def kernel(self, real):
        return _noop

    def extern(self, real):
        return self.recorded.stub(real)


class ClockedKernels(PatchedKernels):
    """Every generated kernel and extern call run for real, with the host clock read at its
    entry and exit: `inside_ns` sums the time inside them since the last `reset`."""

    def __init__(self, cache_root):
        super().__init__(cache_root)
        self.inside_ns = 0
        self.calls = 0

    def reset(self):
        self.inside_ns = 0
        self.calls = 0

    def _clocked(self, real):
        clock = time.perf_counter_ns

        def clocked(*args, **kwargs):
            t0 = clock()
            result = real(*args, **kwargs)
            self.inside_ns += clock() - t0
            self.calls += 1
            return result
        return clocked

    kernel = _clocked
    extern = _clocked

    def outside_ns(self, calls=20000, repeats=5):
        """What a clocked call costs outside the interval it clocks (ns): a clocked no-op's
        whole call less its loop's own cost and the interval; the least of `repeats` tries."""
        clocked = self._clocked(_noop)
        best = None
        for _ in range(repeats):
            self.reset()
            t0 = time.perf_counter_ns()
            for _ in range(calls):
                clocked()
            whole = time.perf_counter_ns() - t0
            inside = self.inside_ns
            t0 = time.perf_counter_ns()
            for _ in range(calls):
                pass
            loop = time.perf_counter_ns() - t0
            cost = max(0.0, (whole - loop - inside) / calls)
            best = cost if best is None else min(best, cost)
        self.reset()
        return best


def graph_breaks():
    try:
        from torch._dynamo.utils import counters
        return sum(counters["graph_break"].values())
    except Exception:  # an older or newer Dynamo without the counter: unknown, not zero
        return None


def _quantiles(samples):
    ordered = sorted(samples)

    def q(p):
        return ordered[min(len(ordered) - 1, int(p * len(ordered)))]
    return round(statistics.median(samples), 3), round(q(0.1), 3), round(q(0.9), 3)


def _stubbed_samples(stubs, model, inputs, sync, min_runs, max_runs, budget_s):
    """Passes with every kernel a no-op (`stubs` installed), µs each."""
    samples = []
    model(*inputs)  # the recorded pass: extern kernels run and their outputs are kept
    sync()
    stubs.recorded.start_replay()
    for _ in range(3):
        model(*inputs)
    sync()
    spent = 0.0
    while len(samples) < max_runs and (len(samples) < min_runs or spent < budget_s):
        t0 = time.perf_counter_ns()
        model(*inputs)
        samples.append((time.perf_counter_ns() - t0) / 1000.0)
        spent += samples[-1] / 1e6
    sync()
    return samples


def _clocked_samples(cache_root, model, inputs, min_runs, max_runs, budget_s):
    """The wrapper of passes on a host whose kernel calls return when done: each pass timed
    whole with every kernel call clocked, less the time inside the calls and the clock's own
    cost outside them (`ClockedKernels.outside_ns`), µs. One pass holds both, so a machine that
    changes speed between passes moves both alike. Returns the samples, the kernel calls a pass
    and the clock's cost outside a call (ns)."""
    clocked = ClockedKernels(cache_root)
    outside_ns = clocked.outside_ns()
    samples = []
    calls = 0
    spent = 0.0
    clocked.install()
    try:
        model(*inputs)
        while len(samples) < max_runs and (len(samples) < min_runs or spent < budget_s):
            clocked.reset()
            t0 = time.perf_counter_ns()
            model(*inputs)
            pass_ns = time.perf_counter_ns() - t0
            spent += pass_ns / 1e9
            calls = clocked.calls
            samples.append((pass_ns - clocked.inside_ns - calls * outside_ns) / 1000.0)
    finally:
        clocked.uninstall()
    return samples, calls, outside_ns


def time_wrapper(cache_root, model, inputs, sync, min_runs=20, max_runs=2000, budget_s=0.5,
                 host_synchronous=False):
    """The `wrapper` section of kernels.json: the host time of the model's forward pass outside
    its kernels, `min_runs`..`max_runs` passes within about `budget_s` per method. With every
    kernel a no-op always; on a host whose kernel calls return when done (`host_synchronous`:
    the CPU), also real passes less their kernel calls, which is then the figure."""
    stubs = NoOpKernels(cache_root).install()
    try:
        stubbed = _stubbed_samples(stubs, model, inputs, sync, min_runs, max_runs, budget_s)
    finally:
        stubs.uninstall()
    breaks = graph_breaks()
    why = []
    if stubs.kernels == 0:
        why.append("no generated kernel was found in the loaded output code")
    if stubs.torch_ops_calls:
        why.append(f"{stubs.torch_ops_calls} call(s) through torch.ops were left real")
    if breaks:
        why.append(f"{breaks} graph break(s): eager code between compiled regions ran real")
    median, p10, p90 = _quantiles(stubbed)
    section = {
        "median_us": median, "p10_us": p10, "p90_us": p90, "runs": len(stubbed), "method": METHOD,
        "kernels_stubbed": stubs.kernels, "externs_stubbed": stubs.externs,
        "torch_ops_calls_left_real": stubs.torch_ops_calls, "graph_breaks": breaks,
        "usable": not why, "why_not_usable": "; ".join(why) or None,
        "stubbed_median_us": median,
    }
    if host_synchronous and stubs.kernels:
        real, calls, outside_ns = _clocked_samples(cache_root, model, inputs, min_runs, max_runs,
                                                   budget_s)
        median, p10, p90 = _quantiles(real)
        section.update({"median_us": median, "p10_us": p10, "p90_us": p90, "runs": len(real),
                        "method": CLOCKED_METHOD, "kernel_calls_clocked": calls,
                        "clock_outside_call_us": round(outside_ns / 1000.0, 4)})
    return section
