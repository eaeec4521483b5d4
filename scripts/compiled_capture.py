"""`capture_trace.py --compile`: the model compiled with torch.compile, Inductor's kernel
profiling on, and its generated kernels recorded after the profiled steps.

The compile happens in the first call (timed and reported). Inductor's cache of the run is
`inductor/cache` beside the trace (compile_env.py); after the profiled steps, one more forward
pass with every generated kernel wrapped writes `inductor/kernels.json`, the integer
arguments' values (`inductor/values/`) and a Python-free library of each C++ kernel
(`inductor/replay/`), see inductor_record.py.
"""
import os
import shutil
import time

import torch

import compile_env
import inductor_record
import inductor_wrapper


class CompiledRun:
    def __init__(self, module, mode, out):
        self.mode = mode
        self.folder = compile_env.inductor_dir(out)
        self.shown = os.path.join(os.path.dirname(out), "inductor")  # as --out names it
        cache = compile_env.cache_dir(out)
        # Already so when run as a script (set before torch's import); torch reads it whenever
        # it writes, so this also holds for a capture called in-process.
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache
        self.warm_cache = os.path.isdir(cache) and bool(os.listdir(cache))
        import torch._inductor.config as inductor_config
        # Each generated C++ kernel becomes a CPU op `graph_N_cpp_fused_*` of the trace.
        inductor_config.cpp.enable_kernel_profile = True
        self.module = torch.compile(module, mode=mode)
        self.compile_seconds = None
        self.kernels_json = None
        self.kernels = self.calls = 0
        self.record_seconds = None
        self.wrapper = None

    def first_call(self, model, inputs, sync):
        """The call that compiles; its time is the compile's (and one step's)."""
        t0 = time.perf_counter()
        model(*inputs)
        sync()
        self.compile_seconds = time.perf_counter() - t0

    def record_kernels(self, model, inputs, sync, dev):
        """One more forward pass with every generated kernel wrapped; writes kernels.json."""
        t0 = time.perf_counter()
        for stale in ("replay", "values"):  # an earlier capture's files into this folder
            shutil.rmtree(os.path.join(self.folder, stale), ignore_errors=True)
        recorder = inductor_record.KernelRecorder(self.folder)
        recorder.install()
        try:
            model(*inputs)
            sync()
        finally:
            recorder.uninstall()
        # The wrapper between the kernels, without the profiler: real passes less their kernel
        # calls on the CPU, with every kernel a no-op on a GPU (whose calls return at launch).
        self.wrapper = inductor_wrapper.time_wrapper(recorder.cache, model, inputs, sync,
                                                     host_synchronous=dev.type == "cpu")
        self.kernels_json = recorder.write(dev.type, self.mode, wrapper=self.wrapper)
        called = [r for r in recorder.records.values() if r.calls]
        self.kernels = len(called)
        self.calls = sum(c["count"] for r in called for c in r.calls.values())
        self.record_seconds = time.perf_counter() - t0

    def trace_note(self):
        """What the trace says of its compiled run (`replayCompile`)."""
        return {"mode": self.mode, "compile_seconds": round(self.compile_seconds, 3),
                "inductor": "inductor/kernels.json", "warm_cache": self.warm_cache}

    def summary(self):
        cache = "warm Inductor cache of an earlier capture" if self.warm_cache else "cold Inductor cache"
        return (f"compiled (mode {self.mode}) in {self.compile_seconds:.1f} s ({cache}); "
                f"{self.kernels} generated kernels, {self.calls} launches recorded in "
                f"{os.path.join(self.shown, 'kernels.json')} ({self.record_seconds:.1f} s, C++ libraries "
                f"built included)" + wrapper_text(self.wrapper))


def wrapper_text(wrapper):
    if not wrapper:
        return ""
    usable = "" if wrapper["usable"] else f" (not counted: {wrapper['why_not_usable']})"
    how = ("real passes less their kernel calls, every kernel a no-op: "
           f"{wrapper['stubbed_median_us']:.1f} us" if "kernel_calls_clocked" in wrapper
           else "every kernel a no-op")
    return (f"; its wrapper between kernels {wrapper['median_us']:.1f} us a pass "
            f"(p10-p90 {wrapper['p10_us']:.1f}-{wrapper['p90_us']:.1f}, {wrapper['runs']} passes, "
            f"{how}){usable}")
