"""The model `capture_trace.py` profiles: a TorchScript file (.pt), a torch.export
ExportedProgram (.pt2, run as its `.module()`), or a zoo model built eagerly (`--zoo NAME`).

torch.compile compiles eager modules and ExportedPrograms' modules; a TorchScript module is
not what it compiles (Dynamo cannot trace into one), so `--compile` refuses it by name.
"""
import logging
import os
import warnings
import zipfile

import torch

from script_io import UsageError


class Loaded:
    """A loaded model: the module, how messages name it, the vocabulary of its token ids (None:
    read it from the module's token embedding) and whether torch.compile can compile it."""

    def __init__(self, module, label, vocab=None, compilable=True):
        self.module, self.label, self.vocab, self.compilable = module, label, vocab, compilable


def zoo_model(name, dev, seed=0):
    import zoo
    if name not in zoo.MODELS:
        raise UsageError(f"--zoo {name}: unknown model (known: {', '.join(sorted(zoo.MODELS))})")
    entry = zoo.MODELS[name]
    module = entry.build(seed).to(dev).eval()
    return Loaded(module, f"zoo model {name}", vocab=entry.vocab_size or None)


def exported_program(path, dev):
    """A .pt2 written by torch.export.save: its ExportedProgram's module on `dev`."""
    if not zipfile.is_zipfile(path):
        raise UsageError(f"{path} is not a torch.export ExportedProgram (.pt2): not a zip archive")
    # torch.export.load logs a whole traceback before raising on a zip that is no
    # ExportedProgram; the one-line usage error below says it.
    export_log = logging.getLogger("torch.export")
    level = export_log.level
    export_log.setLevel(logging.CRITICAL)
    try:
        with warnings.catch_warnings():
            # Loading the weights from the archive's buffer warns that it is not writable.
            warnings.filterwarnings("ignore", message="The given buffer is not writable")
            program = torch.export.load(path)
    except Exception as e:  # torch raises several kinds for a zip that is no ExportedProgram
        cause = e.__cause__ or e.__context__ or e  # torch's own words point at its log
        first = (str(cause).splitlines() or [type(cause).__name__])[0].split(". ")[0]
        raise UsageError(f"{path} is not a torch.export ExportedProgram (.pt2): {first}")
    finally:
        export_log.setLevel(level)
    module = program.module()
    if dev.type != "cpu":
        module = module.to(dev)
    return Loaded(module, str(path))


def torchscript(path, dev):
    try:
        module = torch.jit.load(path, map_location=dev)
    except Exception as e:  # torch raises RuntimeError/ValueError/... for a bad archive
        raise UsageError(f"cannot load {path} as TorchScript: {str(e).splitlines()[0]}")
    module.eval()
    return Loaded(module, str(path), compilable=False)


def load(model_path, zoo_name, dev):
    """The model of `--model PATH` or `--zoo NAME` on `dev`."""
    if zoo_name is not None:
        return zoo_model(zoo_name, dev)
    if os.path.isdir(model_path):
        raise UsageError(f"{model_path} is a folder, not a model file")
    if not os.path.isfile(model_path):
        raise UsageError(f"model file not found: {model_path}")
    if model_path.endswith(".pt2"):
        return exported_program(model_path, dev)
    return torchscript(model_path, dev)
