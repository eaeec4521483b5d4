"""The kernels.json fields of an Inductor Triton kernel (CUDA), read from its CachingAutotuner.

It follows torch 2.11's torch/_inductor/runtime/triton_heuristics.py (the launcher's grid is
`GridExpr.from_meta(...)` evaluated on the call's arguments), and every field is read
defensively: a field this Triton/torch does not have is left out rather than guessed. The
recording of a launch runs after the launch itself, when autotuning has settled on one launcher.

The launch data (cubin, entry name, warps, shared memory, scratch sizes) comes from the Triton
cache the capture keeps (`cache/triton/<device>/<hash>/<kernel>.cubin` and Triton's metadata
`<kernel>.json` beside it): torch 2.11 launches through its static CUDA launcher by default,
whose launcher has no `bin` but a `cache_hash`, the name of that `<hash>` folder. The first GPU
run (H200, Triton 3.6) found no `bin`; a launcher that has one (store_cubin) is still read.
Where neither settles it, replay's reader looks in the same cache itself.
"""
import base64
import glob
import json
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


def path_key(triton_hash):
    """The Triton cache's folder name of a compiled kernel's metadata `hash` (Triton >= 3.2:
    base32 of the hash's bytes, unpadded), as torch's `triton_hash_to_path_key` gives it."""
    return base64.b32encode(bytes.fromhex(triton_hash)).decode().rstrip("=")


def metadata_fields(path):
    """The kernels.json launch fields in Triton's metadata file `path` of a compiled kernel."""
    with open(path) as f:
        meta = json.load(f)
    arch = (meta.get("target") or {}).get("arch")
    fields = {"function": meta.get("name"), "num_warps": meta.get("num_warps"),
              "num_ctas": meta.get("num_ctas"), "shared_mem": meta.get("shared"),
              "global_scratch_size": meta.get("global_scratch_size"),
              "profile_scratch_size": meta.get("profile_scratch_size"),
              "arch": arch if isinstance(arch, int) else None}
    return {k: v for k, v in fields.items() if v is not None}


def cache_fields(folder, name, cache_hash=None):
    """The launch fields of kernel `name` from the Triton cache kept under `folder`: the cubin
    (relative to `folder`) in the `cache_hash` folder, or the only one of that name when no hash
    is known; {} when that does not settle one (autotuning leaves one cubin per config)."""
    found = sorted(glob.glob(os.path.join(folder, "cache", "triton", "*", cache_hash or "*",
                                          name + ".cubin")))
    if len(found) != 1:
        return {}
    metadata = found[0][:-len(".cubin")] + ".json"
    if not os.path.isfile(metadata):
        return {}
    return {**metadata_fields(metadata), "cubin": os.path.relpath(found[0], folder),
            "cache_hash": os.path.basename(os.path.dirname(found[0]))}


def kernel_fields(rec, folder):
    """cubin, function, num_warps, shared_mem, num_ctas, scratch sizes, arch, cache_hash and
    signature, from the launcher the calls used: its cubin in the kept Triton cache, else the
    cubin of its `bin` (written under `folder`/replay)."""
    launcher = getattr(rec, "launcher", None)
    fields = {"signature": [ty for _, ty in getattr(rec, "signature", [])] or None}
    cache_hash = getattr(launcher, "cache_hash", None) if launcher is not None else None
    if not isinstance(cache_hash, str):
        cache_hash = None
    try:
        from_cache = cache_fields(folder, rec.name, cache_hash)
    except (OSError, ValueError):
        from_cache = {}
    if from_cache:
        return {k: v for k, v in {**fields, **from_cache}.items() if v is not None}
    fields["cache_hash"] = cache_hash
    if launcher is None:
        return {k: v for k, v in fields.items() if v is not None}
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
    extra = {}
    for name in ("global_scratch", "profile_scratch"):
        value = getattr(launcher, name, None)
        if isinstance(value, (int, float, str)) or value is None:
            extra[name] = value
    fields["launcher_args"] = extra
    return {k: v for k, v in fields.items() if v is not None}
