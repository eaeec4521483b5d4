#!/usr/bin/env python3
"""Export a traced TorchScript model of the zoo for `replay full` / `replay capture`.

  export_model.py --model NAME | --config CONFIG.json
                  --out PATH.pt [--weights HF_CHECKPOINT_DIR]
                  [--dtype float32|bfloat16|float16] [--seq-len 5] [--seed 0]
                  [--format torchscript|pt2 [--aoti] [--device cpu|cuda[:N]]]

NAME is one of the zoo (scripts/zoo.py): bloom-560m, gpt2-small, bert-base, t5-small,
resnet50 and their -tiny sizes. The weights are random (each architecture's own init):
latency does not depend on the values, and this works with no network. --config (HF config
keys) and --weights (every *.safetensors file of a local checkpoint, mapped by name) are for
BLOOM. Prints one line: `PATH  N parameters  S MB  input SPEC`, SPEC being what `replay
--input` takes for the model's input. Exit code 2 on a usage error (unknown model, bad
config, weights that do not match).

--format pt2 writes a `torch.export` ExportedProgram (a .pt2 archive) instead of TorchScript;
with --aoti it is compiled by AOTInductor for --device into a package `replay full` times from
Rust (export_pt2.py). Both have the example input's shapes (batch 1, --seq-len) fixed.
"""
import argparse
import glob
import json
import os
import re
import struct
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# torch (and numpy, and the models that need them) are imported only once the arguments and the
# config have been checked: importing torch takes seconds, a usage error should not.
import bloom_config  # noqa: E402
from script_io import UsageError, make_out_folder  # noqa: E402

DTYPES = ("bfloat16", "float16", "float32")
FORMATS = ("torchscript", "pt2")
# --device as replay writes it; whether CUDA is there is asked of torch once it is imported.
DEVICE_PATTERN = re.compile(r"cpu|cuda(:[0-9]+)?")


# ---- safetensors -------------------------------------------------------------------------

_NP_DTYPES = {"F64": "float64", "F32": "float32", "F16": "float16", "I64": "int64",
              "I32": "int32", "I16": "int16", "I8": "int8", "U8": "uint8", "BOOL": "bool"}


def read_safetensors_py(path):
    """Pure Python reader: u64 little-endian header length, JSON header mapping each name to
    {dtype, shape, data_offsets: [begin, end]} (offsets relative to the end of the header),
    then the raw little-endian bytes. Returns {name: float32/int torch.Tensor}."""
    import numpy as np
    import torch
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        # Checked before reading: a file that is not safetensors gives a length of exabytes.
        if n > size - 8:
            raise ValueError(f"not a safetensors file: its header length {n} is past the "
                             f"end of the {size}-byte file")
        header = json.loads(f.read(n))
    if not isinstance(header, dict):
        raise ValueError("not a safetensors file: its header is not a JSON object")
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + n)  # checkpoints can be GBs
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        raw, shape = data[begin:end], info["shape"]
        if info["dtype"] == "BF16":
            # bf16 is the top half of a float32: widen the bits and shift them into place.
            arr = (raw.view("<u2").astype(np.uint32) << 16).view(np.float32)
        elif info["dtype"] in _NP_DTYPES:
            # the file is little-endian; astype gives a native-order copy torch can take
            dtype = np.dtype(_NP_DTYPES[info["dtype"]])
            arr = raw.view(dtype.newbyteorder("<")).astype(dtype)
        else:
            raise UsageError(f"{path}: tensor {name} has unsupported dtype {info['dtype']}")
        out[name] = torch.from_numpy(arr.reshape(shape))
    return out


def read_safetensors(path):
    try:
        from safetensors.torch import load_file
    except ImportError:
        return read_safetensors_py(path)
    return load_file(path)


def load_checkpoint(model, weights_dir):
    """Copy an HF checkpoint's tensors into `model`, by name. HF names carry a
    `transformer.` prefix in BloomForCausalLM checkpoints and none in BloomModel ones;
    lm_head.weight, when saved, is the tied word_embeddings and is skipped."""
    import torch
    files = sorted(glob.glob(os.path.join(weights_dir, "*.safetensors")))
    if not files:
        raise UsageError(f"--weights {weights_dir}: no *.safetensors files there")
    tensors = {}
    for path in files:
        try:
            tensors.update(read_safetensors(path))
        except (OSError, ValueError, KeyError, TypeError, struct.error) as e:
            raise UsageError(f"--weights: cannot read {path}: {e}")
    params = dict(model.named_parameters())
    loaded, unexpected, bad_shape = set(), [], []
    with torch.no_grad():
        for hf_name, t in tensors.items():
            name = hf_name.removeprefix("transformer.")
            if name == "lm_head.weight":
                continue
            if name not in params:
                unexpected.append(hf_name)
            elif tuple(t.shape) != tuple(params[name].shape):
                bad_shape.append(f"{hf_name} {tuple(t.shape)} != {tuple(params[name].shape)}")
            else:
                params[name].copy_(t)
                loaded.add(name)
    missing = sorted(set(params) - loaded)
    problems = []
    for label, names in (("missing", missing), ("unexpected", unexpected), ("wrong shape", bad_shape)):
        if names:
            shown = ", ".join(names[:5]) + (f", ... ({len(names)} in all)" if len(names) > 5 else "")
            problems.append(f"{label}: {shown}")
    if problems:
        raise UsageError(f"--weights {weights_dir} does not match the model: " + "; ".join(problems))


# ---- export ------------------------------------------------------------------------------

def resolve_config(args):
    """The BLOOM config of --model, --config or the --weights folder."""
    if args.model:
        return bloom_config.CONFIGS[args.model]
    path = args.config
    if not path and args.weights and os.path.isfile(os.path.join(args.weights, "config.json")):
        path = os.path.join(args.weights, "config.json")  # an HF checkpoint dir carries its config
    if not path:
        raise UsageError("give --model NAME or --config JSON")
    try:
        return bloom_config.config_from_json(path)
    except (OSError, ValueError) as e:  # json.JSONDecodeError is a ValueError
        raise UsageError(f"bad config file {path}: {e}")


def check_usage(args):
    """Everything that can be refused without torch: --out, --seq-len, --model with --config,
    the config itself and a --weights folder without checkpoint files."""
    # Before the model is built: an --out that can never be written.
    pt2 = args.format == "pt2"
    if os.path.isdir(args.out):
        raise UsageError(f"--out {args.out} is a folder; give the name of the "
                         f"{'.pt2' if pt2 else '.pt'} file to write")
    if args.aoti and not pt2:
        raise UsageError("--aoti compiles a torch.export program: give it with --format pt2")
    if args.device is not None and not pt2:
        raise UsageError("--device is for --format pt2 (a TorchScript model is written for the CPU "
                         "and moved by replay)")
    if args.device is not None and not DEVICE_PATTERN.fullmatch(args.device):
        raise UsageError(f"bad --device {args.device!r}: give cpu, cuda or cuda:N")
    if pt2 and not args.out.endswith(".pt2"):
        raise UsageError(f"--out {args.out}: a PT2 archive's name must end in .pt2")
    make_out_folder(args.out)
    if args.seq_len < 1:
        raise UsageError("--seq-len must be at least 1")
    if args.model and args.config:
        raise UsageError("give --model or --config, not both")
    if args.model and args.model not in bloom_config.CONFIGS:
        if args.weights:
            raise UsageError(f"--weights loads BLOOM checkpoints; {args.model} takes random weights only")
    else:
        resolve_config(args)
    if args.weights and not glob.glob(os.path.join(args.weights, "*.safetensors")):
        raise UsageError(f"--weights {args.weights}: no *.safetensors files there")


def torch_device(name):
    """--device (already of the right form) as a torch device that is here, or a usage error."""
    import torch
    dev = torch.device(name or "cpu")
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise UsageError(f"--device {name}: CUDA is not available here "
                             "(torch.cuda.is_available() is false); compile the package where it will run")
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise UsageError(f"--device {name}: only {torch.cuda.device_count()} CUDA device(s)")
    return dev


def build_model(args):
    """(model with its weights, zoo entry) for --model NAME, or a BLOOM of --config/--weights."""
    import bloom
    import zoo

    if args.model and args.model not in zoo.MODELS:
        raise UsageError(f"unknown model {args.model!r}; known: {', '.join(zoo.MODELS)}")
    if args.model and args.model not in bloom.CONFIGS:
        if args.weights:
            raise UsageError(f"--weights loads BLOOM checkpoints; {args.model} takes random weights only")
        return zoo.MODELS[args.model].build(args.seed), zoo.MODELS[args.model]
    cfg = resolve_config(args)
    model = bloom.BloomForCausalLM(cfg)
    if args.weights:
        load_checkpoint(model, args.weights)
    else:
        bloom.init_weights(model, args.seed)
    return model, zoo.ZooModel(build=None, vocab_size=cfg.vocab_size)


def export(args):
    check_usage(args)
    import torch

    model, entry = build_model(args)
    dtype = getattr(torch, args.dtype)
    model = model.to(dtype).eval()

    g = torch.Generator().manual_seed(args.seed)
    example = entry.example(1, args.seq_len, dtype, g)
    if args.format == "pt2":
        export_pt2_archive(args, model, entry, example)
        return
    # The trace must generalise: other lengths for text, another batch for images.
    probe = entry.example(2 if entry.takes_images else 1, args.seq_len + 3, dtype, g)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # "torch.jit.trace is deprecated"
        warnings.simplefilter("ignore", torch.jit.TracerWarning)  # constants of a fixed architecture
        traced = torch.jit.trace(model, example, check_trace=False)
        want, got = model(probe), traced(probe)
    tol = 1e-4 if args.dtype == "float32" else 2e-2
    if not torch.allclose(got.float(), want.float(), atol=tol, rtol=tol):
        raise RuntimeError("traced model disagrees with eager on another input size")

    tmp = args.out + ".tmp"
    try:
        torch.jit.save(traced, tmp)
        os.replace(tmp, args.out)  # never leave a half-written model under the final name
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"{args.out}  {n_params} parameters  {os.path.getsize(args.out) / 1e6:.1f} MB  "
          f"input {entry.input_spec(1, args.seq_len, args.dtype)}")


def export_pt2_archive(args, model, entry, example):
    """--format pt2 [--aoti]: the ExportedProgram or AOTInductor package (export_pt2.py)."""
    import torch
    import export_pt2

    device = torch_device(args.device)
    model, example = model.to(device), example.to(device)
    with torch.no_grad():
        want = model(example)
    spec = entry.input_spec(1, args.seq_len, args.dtype)
    tol = 1e-4 if args.dtype == "float32" else 2e-2
    # Inductor's generated code may reorder float sums: the package is checked to 1e-3.
    if args.aoti:
        tol = max(tol, 1e-3)
    name = args.model or os.path.basename(args.config or args.weights or "bloom")
    what = export_pt2.export(model, example, want, args.out, device, args.aoti, spec, name, tol)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"{args.out}  {n_params} parameters  {os.path.getsize(args.out) / 1e6:.1f} MB  "
          f"input {spec}  ({what})")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", help="a model of the zoo (scripts/zoo.py), e.g. bloom-560m or gpt2-small")
    p.add_argument("--config", help="HF-style BLOOM config.json (n_layer, hidden_size, n_head, vocab_size, ...)")
    p.add_argument("--out", required=True, help="output file: TorchScript (.pt) or with --format pt2 a .pt2")
    p.add_argument("--weights", help="local HF checkpoint directory with *.safetensors")
    p.add_argument("--dtype", choices=DTYPES, default="float32")
    p.add_argument("--seq-len", type=int, default=5, help="example input length for tracing")
    p.add_argument("--seed", type=int, default=0, help="seed of the random weights and example input")
    p.add_argument("--format", choices=FORMATS, default="torchscript",
                   help="torchscript (default) or pt2: a torch.export ExportedProgram")
    p.add_argument("--aoti", action="store_true",
                   help="with --format pt2: compile it with AOTInductor for --device into a package")
    p.add_argument("--device", help="with --format pt2: cpu (default), cuda or cuda:N")
    args = p.parse_args(argv)
    try:
        export(args)
    except UsageError as e:
        print(f"export_model: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
