"""The kernels.json fields of an Inductor Triton kernel (CUDA), read from its CachingAutotuner.

UNTESTED: written without a GPU (none on the machine this was written on). It follows
torch 2.11's torch/_inductor/runtime/triton_heuristics.py (`save_gpu_kernel` reads the same
launcher fields for AOTInductor; the launcher's grid is `GridExpr.from_meta(...)` evaluated on
the call's arguments), and every field is read defensively: a field this Triton/torch does not
have is left out rather than guessed. The recording of a launch runs after the launch itself,
when autotuning has settled on one launcher.
"""
import os


def _field(obj, *names):
    """The first of `names` that `obj` (an object or a dict) has, else None."""
    for name in names:
        if isinstance(obj, dict) and name in obj:
            return obj[name]
        if hasattr(obj, name):
            return getattr(obj, name)
    return None


def _first(*values):
    return next((v for v in values if v is not None), None)


def signature(autotuner):
    """Triton's signature without the constexprs: [(name, type)] in argument order."""
    sig = autotuner.triton_meta.get("signature", {})
    return [(name, str(ty)) for name, ty in sig.items() if str(ty) != "constexpr"]


def launch_grid(autotuner, launcher, args):
    """(x, y, z) blocks of this launch, as the launcher computes them, or None."""
    try:
        from torch._inductor.runtime.triton_heuristics import GridExpr
        names = [n for n, _ in signature(autotuner)] + list(autotuner.inductor_meta.get("extra_launcher_args", ()))
        grid = GridExpr.from_meta(autotuner.inductor_meta, launcher.config)
        return [int(g) for g in grid.eval_slow(dict(zip(names, args)))]
    except Exception:
        return None


def record_launch(rec, autotuner, args):
    """Records one launch of `autotuner` with positional `args` in `rec` (a KernelRecord), before
    it runs (integer arguments keep the values the kernel reads); returns what `launched` needs."""
    rec.signature = signature(autotuner)
    return rec.record(args, extra={})


def launched(rec, autotuner, call, args):
    """After the launch: the grid of the launcher autotuning settled on, and that launcher."""
    launchers = getattr(autotuner, "launchers", [])
    if len(launchers) != 1:
        return
    rec.launcher = launchers[0]
    if "grid" not in call["extra"]:
        call["extra"]["grid"] = launch_grid(autotuner, launchers[0], args)


def kernel_fields(rec, folder):
    """cubin (written under `folder`/replay), function, num_warps, shared_mem, signature and the
    trailing launcher arguments of the Triton version, from the launcher the calls used."""
    launcher = getattr(rec, "launcher", None)
    fields = {"signature": None}
    if launcher is None:
        return fields
    binary = getattr(launcher, "bin", None)
    metadata = _field(binary, "metadata")
    asm = _field(binary, "asm") or {}
    cubin = asm.get("cubin") if isinstance(asm, dict) else None
    if isinstance(cubin, (bytes, bytearray)):
        path = os.path.join(folder, "replay", rec.trace_name + ".cubin")
        with open(path, "wb") as f:
            f.write(cubin)
        fields["cubin"] = os.path.relpath(path, folder)
    fields["function"] = _field(metadata, "name")
    fields["num_warps"] = _first(_field(binary, "num_warps"), _field(metadata, "num_warps"))
    fields["shared_mem"] = _first(_field(binary, "shared"), _field(metadata, "shared"))
    fields["signature"] = [ty for _, ty in getattr(rec, "signature", [])] or None
    extra = {}
    for name in ("global_scratch", "profile_scratch"):
        value = getattr(launcher, name, None)
        if isinstance(value, (int, float, str)) or value is None:
            extra[name] = value
    fields["launcher_args"] = extra
    return {k: v for k, v in fields.items() if v is not None}
