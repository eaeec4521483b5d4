"""`replay export --format pt2 [--aoti]`: a zoo model as a `torch.export` ExportedProgram, or
compiled by AOTInductor into a package that `replay full --model M.pt2` loads with libtorch's
`AOTIModelPackageLoader` (no Python at timing time).

Both are PT2 archives (zip). Shapes are those of the example input (`--seq-len`, batch 1):
the package is compiled for exactly that input, which it records in its metadata (Inductor's
`aot_inductor.metadata`, a dict of strings) under METADATA_INPUT, as `replay full --input`
writes it, so `replay full` knows what to feed it.
"""
import contextlib
import os
import shutil
import time

# The metadata keys replay reads back (src/model/aoti_package.rs): the input spec(s), one per
# model input, separated by spaces; the model's name; how long the compile took.
METADATA_INPUT = "replay_input"
METADATA_MODEL = "replay_model"
METADATA_DEVICE = "replay_device"


def export_program(model, example):
    """The ExportedProgram of `model` on the one input tensor `example` (static shapes)."""
    import torch
    with torch.no_grad():
        return torch.export.export(model, (example,), strict=False)


def check_agrees(name, got, want, tol):
    import torch
    if isinstance(got, (list, tuple)):  # a compiled package returns its outputs flattened
        got = got[0]
    if not torch.allclose(got.float().cpu(), want.float().cpu(), atol=tol, rtol=tol):
        diff = (got.float().cpu() - want.float().cpu()).abs().max().item()
        raise RuntimeError(f"{name} disagrees with eager on the example input (max |diff| {diff:.3g})")


@contextlib.contextmanager
def written_then_moved(out):
    """A path to write `out`'s content to, moved to `out` once written: a failed export never
    leaves a half-written file under that name. Same file name in a folder beside it, because
    the archive's root folder is named after the file (and the name must end in .pt2)."""
    folder = out + ".partial"
    os.makedirs(folder, exist_ok=True)
    try:
        tmp = os.path.join(folder, os.path.basename(out))
        yield tmp
        os.replace(tmp, out)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def save_program(program, out):
    """torch.export.save to `out`."""
    import torch
    with written_then_moved(out) as tmp:
        torch.export.save(program, tmp)


def compile_package(program, out, metadata):
    """AOTInductor-compiles `program` into the package `out`, with `metadata` (str -> str) in
    it; returns the seconds the compile took."""
    import torch
    start = time.perf_counter()
    with written_then_moved(out) as tmp:
        torch._inductor.aoti_compile_and_package(
            program, package_path=tmp,
            inductor_configs={"aot_inductor.metadata": dict(metadata)})
    return time.perf_counter() - start


def export(model, example, want, out, device, aoti, input_spec, model_name, tol):
    """Writes the ExportedProgram (or with `aoti` the AOTInductor package) of `model` on
    `example` (already on `device`) to `out`, after checking it against eager's `want`.
    Returns a note for export's summary line."""
    import torch
    program = export_program(model, example)
    with torch.no_grad():
        check_agrees("the exported program", program.module()(example), want, tol)
    if not aoti:
        save_program(program, out)
        return "ExportedProgram"
    metadata = {METADATA_INPUT: input_spec, METADATA_MODEL: model_name, METADATA_DEVICE: str(device)}
    seconds = compile_package(program, out, metadata)
    compiled = torch._inductor.aoti_load_package(out)
    with torch.no_grad():
        check_agrees("the AOTInductor package", compiled(example), want, tol)
    return f"AOTInductor package for {device}, compiled in {seconds:.1f} s"
