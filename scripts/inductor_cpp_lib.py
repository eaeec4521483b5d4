"""A Python-free shared library of one Inductor C++ kernel, for `replay isolated` to dlopen.

The library Inductor loads for a `cpp_fused_*` kernel is a Python extension: its `<key>.main.cpp`
is the kernel's source followed by Python bindings (from the line `// Python bindings to call
kernel():` on), and the built `.so` references Python's C API (PyTuple_*, PyLong_*, ...), so a
process without Python cannot dlopen it. Here the source is cut before the bindings and built
again with Inductor's own builder and options (`CppBuilder`, `CppTorchDeviceOptions` as
`CppPythonBindingsCodeCache` sets them: no libtorch, shared, the vector ISA Inductor picked).
The result exports `extern "C" void kernel(...)` and, appended to the source, one uniform entry
`extern "C" void replay_entry(void** args)` that calls `kernel` with `args[i]` read as the i-th
C type of `arg_types`: replay (Rust) calls every kernel through that one signature, so it never
has to build a C argument list of its own (floats travel in other registers than pointers and
integers). With kernel profiling on, the kernel calls
libtorch's AOTI shim (`aoti_record_function_start/end`); those symbols stay undefined and are
resolved from the libtorch the replaying process links (a Python process: load libtorch_cpu
with RTLD_GLOBAL first, as `load` does).
"""
import ctypes
import os
import subprocess

import torch

SYMBOL = "kernel"
ENTRY = "replay_entry"
BINDINGS_MARKER = "// Python bindings to call kernel():"

# C types of `arg_types` (Inductor's argtypes) -> ctypes.
CTYPES = {"int64_t": ctypes.c_int64, "long": ctypes.c_long, "uintptr_t": ctypes.c_size_t,
          "float": ctypes.c_float, "double": ctypes.c_double, "int32_t": ctypes.c_int32,
          "bool": ctypes.c_bool}


def kernel_only(main_cpp_text):
    """The kernel's source: `<key>.main.cpp` cut before its Python bindings."""
    cut = main_cpp_text.find(BINDINGS_MARKER)
    return (main_cpp_text if cut < 0 else main_cpp_text[:cut]).rstrip() + "\n"


def entry_point(arg_types):
    """`replay_entry(void** args)`: `args[i]` points at the i-th argument of `kernel`, whose C
    type is `arg_types[i]` (a pointer's value is the data pointer; a scalar's its value)."""
    reads = []
    for i, t in enumerate(arg_types):
        t = " ".join(t.split())
        if not t:
            raise ValueError(f"argument {i} has no C type")
        reads.append(f"*({t}*)args[{i}]")
    body = ", ".join(reads)
    return f'\nextern "C" void {ENTRY}(void** args) {{\n    {SYMBOL}({body});\n}}\n'


def main_cpp_of(binding):
    """`<key>.main.cpp` in Inductor's cache for a loaded Python-binding kernel (the builtin
    `kernel` of the extension module Inductor imported from `<key>.main.so`), or None."""
    mod = getattr(binding, "__self__", None)
    so = getattr(mod, "__file__", None)
    if not so:
        return None
    cpp = os.path.splitext(so)[0] + ".cpp"
    return cpp if os.path.isfile(cpp) else None


def build_options():
    """The options Inductor builds a C++ kernel with (CppCodeCache.load_async for a kernel
    without separately optimised code), its precompiled `cpp_prefix.h` included: Inductor
    made that header while compiling, so it is found in the cache, not built again."""
    from torch._inductor import config
    from torch._inductor.codecache import _get_cpp_prefix_header, _precompile_header
    from torch._inductor.cpp_builder import CppBuilder, CppTorchDeviceOptions
    from torch._inductor.cpu_vec_isa import pick_vec_isa
    command = {"include_pytorch": False, "shared": True, "device_type": "cpu", "extra_flags": (),
               "use_relative_path": config.is_fbcode(), "vec_isa": pick_vec_isa()}
    options = CppTorchDeviceOptions(compile_only=False, min_optimize=False, **command)
    header = _get_cpp_prefix_header("cpu")
    if config.cpp_cache_precompile_headers and header:
        line = CppBuilder(name="o", sources="i", BuildOption=options).get_command_line()
        options.precompiled_header = _precompile_header(header, line, min_optimize=False, **command)
    return options


def build(source, out_dir, name, arg_types):
    """Writes `source` (a kernel without bindings) and its `replay_entry` to `out_dir/name.cpp`,
    builds `out_dir/name.so` and checks it; returns both paths."""
    from torch._inductor.cpp_builder import CppBuilder
    cpp = os.path.join(out_dir, name + ".cpp")
    with open(cpp, "w") as f:
        f.write(kernel_only(source) + entry_point(arg_types))
    builder = CppBuilder(name=name, sources=cpp, BuildOption=build_options(), output_dir=out_dir)
    builder.build()
    lib = builder.get_target_file_path()
    problems = python_free_problems(lib)
    if problems:
        raise RuntimeError(f"{lib}: {problems}")
    return cpp, lib


def dynamic_symbols(lib, undefined):
    flag = "--undefined-only" if undefined else "--defined-only"
    out = subprocess.run(["nm", "-D", flag, lib], capture_output=True, text=True, check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


def python_free_problems(lib):
    """What keeps `lib` from being a Python-free kernel library ("" when nothing): a Python
    symbol it needs, or no `kernel` export."""
    python = sorted(s for s in dynamic_symbols(lib, True) if s.startswith(("Py", "_Py")))
    if python:
        return f"needs Python's C API ({', '.join(python[:3])}...)"
    exported = dynamic_symbols(lib, False)
    for symbol in (SYMBOL, ENTRY):
        if symbol not in exported:
            return f"does not export {symbol}"
    return ""


def load(lib):
    """ctypes handle of a kernel library, libtorch's shim made visible to it first."""
    torch_lib = os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so")
    ctypes.CDLL(torch_lib, mode=ctypes.RTLD_GLOBAL)
    return ctypes.CDLL(lib)


def call(handle, arg_types, args):
    """Calls `kernel` with `args` (tensors for pointers, numbers otherwise) as `arg_types` say."""
    fn = getattr(handle, SYMBOL)
    c_args = []
    for t, a in zip(arg_types, args):
        base = t.replace("const ", "").strip()
        if base.endswith("*"):
            c_args.append(ctypes.c_void_p(a.data_ptr()))
        elif base in CTYPES:
            c_args.append(CTYPES[base](a))
        else:
            raise ValueError(f"argument type {t!r} is not one ctypes can pass here")
    fn.restype = None
    fn(*c_args)


def call_entry(handle, arg_types, args):
    """Calls `replay_entry` as replay does: an array of pointers, each to one argument's value
    (a tensor's data pointer, or the scalar converted to its C type)."""
    values = []
    for t, a in zip(arg_types, args):
        base = t.replace("const ", "").strip()
        if base.endswith("*"):
            values.append(ctypes.c_void_p(a.data_ptr()))
        elif base in CTYPES:
            values.append(CTYPES[base](a))
        else:
            raise ValueError(f"argument type {t!r} is not one ctypes can pass here")
    array = (ctypes.c_void_p * len(values))(*[ctypes.cast(ctypes.pointer(v), ctypes.c_void_p) for v in values])
    fn = getattr(handle, ENTRY)
    fn.restype = None
    fn(array)
