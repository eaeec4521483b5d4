"""Recording a torch.compile'd model's generated kernels: `inductor/kernels.json` (the format of
`replay isolated`'s tier 4, issue 30), with the integer arguments' values and, on the CPU, a
Python-free library of each Inductor C++ kernel.

After the compiled model has run, Inductor's output-code modules (the `call()` of each compiled
graph and its kernels) are loaded from the cache: `PyCodeCache.modules`. Each C++ kernel there
is a module global `cpp_fused_*` made by `async_compile.cpp_pybinding(argtypes, source)`, a
Python binding; each Triton kernel (CUDA) a CachingAutotuner `triton_*`. `call()` looks its
kernels up among its module's globals at every call, so replacing them with recording wrappers
for one forward pass sees every launch with the arguments it really receives.
"""
import ast
import json
import os
import re

import numpy as np
import torch

import inductor_cpp_lib
import inductor_triton

FORMAT = "replay-inductor-kernels"
VERSION = 1
# The name the profiler records for a C++ kernel compiled with kernel profiling on:
# `RAIIAtenRecordFunctionHandle record_graph_0_cpp_fused_x_("graph_0_cpp_fused_x", nullptr);`
PROFILED_NAME = re.compile(r'RAIIAtenRecordFunctionHandle\s+\w+\(\s*"([^"]+)"')
CPP_KERNEL = re.compile(r"^cpp_fused_\w+$")
TRITON_KERNEL = re.compile(r"^triton_\w+$")


def output_modules(cache_root):
    """Inductor's loaded output-code modules whose file is under `cache_root`, each once (the
    same file may be loaded more than once, with other attributes: every copy is kept, since
    the compiled graph calls one of them)."""
    from torch._inductor.codecache import PyCodeCache
    root = os.path.realpath(cache_root)
    seen, mods = set(), []
    for mod in PyCodeCache.modules:
        path = os.path.realpath(getattr(mod, "__file__", "") or "")
        if id(mod) in seen or not path.startswith(root + os.sep) or not hasattr(mod, "call"):
            continue
        seen.add(id(mod))
        mods.append(mod)
    return mods


def cpp_bindings(module_path):
    """`{name: (argtypes, source)}` of every `name = async_compile.cpp_pybinding([...], '''...''')`
    in the output code at `module_path`."""
    with open(module_path) as f:
        tree = ast.parse(f.read())
    found = {}
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.Call)):
            continue
        call = node.value
        if not (isinstance(call.func, ast.Attribute) and call.func.attr == "cpp_pybinding"):
            continue
        args = list(call.args) + [k.value for k in call.keywords if k.arg in ("argtypes", "source_code")]
        if len(args) >= 2:
            found[node.targets[0].id] = (ast.literal_eval(args[0]), ast.literal_eval(args[1]))
    return found


def dtype_name(dtype):
    return str(dtype).removeprefix("torch.")


def holds_indices(t):
    """Integer and bool tensors: their values may index other tensors, so they are kept."""
    return not t.dtype.is_floating_point and not t.dtype.is_complex


def describe_arg(a):
    """(layout key, JSON description, values to save or None) of one kernel argument."""
    if isinstance(a, torch.Tensor):
        desc = {"dtype": dtype_name(a.dtype), "sizes": list(a.shape), "strides": list(a.stride()),
                "storage_offset": a.storage_offset()}
        values = a.detach().cpu().clone().numpy() if holds_indices(a) else None
        return ("tensor", desc["dtype"], tuple(desc["sizes"]), tuple(desc["strides"]),
                desc["storage_offset"]), {"tensor": desc}, values
    if isinstance(a, bool):
        return ("int", int(a)), {"int": int(a)}, None
    if isinstance(a, int):
        return ("int", a), {"int": a}, None
    if isinstance(a, float):
        return ("float", a), {"float": a}, None
    if a is None:
        return ("none",), {"none": None}, None
    return ("other", type(a).__name__), {"other": type(a).__name__}, None


class KernelRecord:
    """The calls of one generated kernel, one entry per distinct argument layout."""

    def __init__(self, name, trace_name, kind, graph, source):
        self.name, self.trace_name, self.kind = name, trace_name, kind
        self.graph, self.source = graph, source
        self.calls = {}  # layout key -> {"count", "args", "values": {arg index: array}, "extra"}
        self.fields = {}  # kind-specific fields of the kernels.json entry

    def record(self, args, extra=None):
        described = [describe_arg(a) for a in args]
        key = tuple(d[0] for d in described)
        call = self.calls.get(key)
        if call is None:
            call = self.calls[key] = {
                "count": 0, "args": [d[1] for d in described],
                "values": {i: d[2] for i, d in enumerate(described) if d[2] is not None},
                "extra": extra or {}}
        call["count"] += 1
        return call

    def entry(self, folder):
        """The kernels.json entry; writes the values of its integer arguments under `folder`."""
        calls = []
        for n, call in enumerate(self.calls.values()):
            args = [dict(a) for a in call["args"]]
            for i, values in call["values"].items():
                rel = os.path.join("values", f"{self.trace_name}.{n}.{i}.npy")
                np.save(os.path.join(folder, rel), values)
                args[i] = {"tensor": {**args[i]["tensor"], "values": rel}}
            calls.append({"count": call["count"], "args": args, **call["extra"]})
        return {"name": self.name, "trace_name": self.trace_name, "kind": self.kind,
                "graph": self.graph, "source": self.source, **self.fields, "calls": calls}


def graph_of(trace_name):
    m = re.match(r"graph_(\d+)_", trace_name)
    return int(m.group(1)) if m else None


class KernelRecorder:
    """Wraps every generated kernel of the loaded output code, records one forward pass, puts
    the kernels back, and writes kernels.json."""

    def __init__(self, folder):
        self.folder = folder
        self.cache = os.path.join(folder, "cache")
        self.records = {}  # trace name -> KernelRecord
        self.restore = []  # (object, attribute, original)

    def rel(self, path):
        return os.path.relpath(path, self.folder)

    def install(self):
        for mod in output_modules(self.cache):
            bindings = cpp_bindings(mod.__file__)
            for name, value in list(vars(mod).items()):
                if CPP_KERNEL.match(name) and name in bindings and callable(value):
                    self._wrap_cpp(mod, name, value, *bindings[name])
                elif TRITON_KERNEL.match(name) and hasattr(value, "run") and hasattr(value, "launchers"):
                    self._wrap_triton(mod, name, value)
        return len(self.records)

    def _record_for(self, mod, name, trace_name, kind):
        rec = self.records.get(trace_name)
        if rec is None:
            rec = self.records[trace_name] = KernelRecord(
                name, trace_name, kind, graph_of(trace_name), self.rel(mod.__file__))
        return rec

    def _wrap_cpp(self, mod, name, fn, argtypes, source):
        m = PROFILED_NAME.search(source)
        rec = self._record_for(mod, name, m.group(1) if m else name, "inductor_cpp")
        # The kernel's source as Inductor compiled it: its `<key>.main.cpp` (found from the
        # extension module the binding belongs to), else the source in the output code.
        main_cpp = inductor_cpp_lib.main_cpp_of(fn)
        if main_cpp is not None:
            with open(main_cpp) as f:
                source = inductor_cpp_lib.kernel_only(f.read())
        rec.fields = {"argtypes": list(argtypes), "source_code": source}

        def recording(*args):
            out = fn(*args)
            # Recorded after the call: an integer buffer the kernel fills and then reads
            # through another argument (t5's decoder ids, a `cat` it writes and embeds in one
            # kernel) holds uninitialised memory before it, whose values index out of bounds.
            rec.record(args)
            return out
        setattr(mod, name, recording)
        self.restore.append((mod, name, fn))

    def _wrap_triton(self, mod, name, autotuner):
        # On CUDA the profiler names the launch by the kernel itself: triton_poi_fused_*.
        rec = self._record_for(mod, name, name, "triton")
        original = autotuner.run

        def recording(*args, **kwargs):
            call = inductor_triton.record_launch(rec, autotuner, args)
            out = original(*args, **kwargs)
            inductor_triton.launched(rec, autotuner, call, args)
            return out
        autotuner.run = recording
        self.restore.append((autotuner, "run", None))

    def uninstall(self):
        for obj, attr, original in reversed(self.restore):
            if original is None:
                delattr(obj, attr)  # the instance attribute that shadowed the method
            else:
                setattr(obj, attr, original)
        self.restore = []

    def write(self, device, mode, wrapper=None):
        """Builds the C++ libraries, saves the values and writes kernels.json (with the
        `wrapper` section of inductor_wrapper.time_wrapper when given); returns its path."""
        os.makedirs(os.path.join(self.folder, "values"), exist_ok=True)
        os.makedirs(os.path.join(self.folder, "replay"), exist_ok=True)
        entries = []
        for rec in sorted(self.records.values(), key=lambda r: r.trace_name):
            if not rec.calls:
                continue  # loaded, but not called by the recorded pass
            if rec.kind == "inductor_cpp":
                argtypes, source = rec.fields["argtypes"], rec.fields["source_code"]
                cpp, lib = inductor_cpp_lib.build(source, os.path.join(self.folder, "replay"), rec.trace_name,
                                                  argtypes)
                rec.fields = {"kernel_source": self.rel(cpp), "library": self.rel(lib),
                              "symbol": inductor_cpp_lib.ENTRY, "arg_types": argtypes}
            else:
                rec.fields = inductor_triton.kernel_fields(rec, self.folder)
            entries.append(rec.entry(self.folder))
        doc = {"format": FORMAT, "version": VERSION, "torch": torch.__version__.split("+")[0],
               "device": device, "mode": mode, "kernels": entries}
        if wrapper is not None:
            doc["wrapper"] = wrapper
        path = os.path.join(self.folder, "kernels.json")
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(doc, f, indent=1)
        os.replace(tmp, path)
        return path
