#!/usr/bin/env python3
"""What `replay bench quant` needs Python for, one row at a time: torch.compile of the row's
model and recipe (the seed's users compare compiled times), and a Kineto profiler trace of
one eager call of the quantized model, which `replay classify` reads.

The models and recipes are written with the same aten ops as the Rust suite
(src/suites/quant/quantized_linear.rs): _weight_int8pack_mm, _int_mm,
_convert_weight_to_int4pack[_for_cpu] + _weight_int4pack_mm[_for_cpu], _scaled_mm. The
timing is the seed's: torch.utils.benchmark.Timer(num_threads=N), timeit(warmup) then the
mean of timeit(runs). Prints one JSON line.
"""
import argparse
import json
import math
import os
import sys

import torch
from torch.utils.benchmark import Timer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from script_io import UsageError, make_out_folder  # noqa: E402

F8 = torch.float8_e4m3fn
F8_MAX = 448.0
MIN_SCALE = 1e-12
HEADS, SEQ, MLP = 8, 16, 4
# As INT8_PACKED_MAX_ROWS in src/suites/quant/quantized_linear.rs.
INT8_PACKED_MAX_ROWS = 64
ACTS = {
    "sigmoid": torch.sigmoid,
    "relu": torch.relu,
    "leakyrelu": torch.nn.functional.leaky_relu,
    "relu6": torch.nn.functional.relu6,
    "gelu": torch.nn.functional.gelu,
    "silu": torch.nn.functional.silu,
    "hardswish": torch.nn.functional.hardswish,
}


def int8_rows(x):
    x32 = x.float()
    scale = x32.abs().amax(-1, keepdim=True).clamp_min(MIN_SCALE) / 127.0
    return (x32 / scale).round().clamp(-128, 127).to(torch.int8), scale


def float8(x, per_row):
    x32 = x.float()
    amax = x32.abs().amax(-1, keepdim=True) if per_row else x32.abs().max()
    scale = amax.clamp_min(MIN_SCALE) / F8_MAX
    return (x32 / scale).clamp(-F8_MAX, F8_MAX).to(F8), scale


class QLinear(torch.nn.Module):
    """Linear(k, n, bias=False) under a recipe, as src/suites/quant/quantized_linear.rs."""

    def __init__(self, recipe, w):
        super().__init__()
        self.recipe, self.dtype, self.cuda = recipe, w.dtype, w.is_cuda
        n, k = w.shape
        self.k = k
        if recipe == "baseline":
            self.w = w
        elif recipe in ("int8wo", "int8dq"):
            self.q, self.scale = int8_rows(w)
            self.scale_hp = self.scale.reshape(n).to(w.dtype)
        elif recipe.startswith("int4wo-"):
            g = int(recipe.split("-")[1])
            if k % g:
                raise UsageError(f"{recipe}: k = {k} is not a multiple of the group size")
            self.g = g
            wg = w.float().reshape(n, k // g, g)
            mn, mx = wg.amin(-1, keepdim=True), wg.amax(-1, keepdim=True)
            scale = ((mx - mn) / 15.0).clamp_min(1e-6)
            zero = mn + 8 * scale
            q = ((wg - mn) / scale).round().clamp(0, 15).reshape(n, k).to(torch.int32)
            if self.cuda:
                packed_u8 = (q[:, ::2] * 16 + q[:, 1::2]).to(torch.uint8)
                self.packed = torch.ops.aten._convert_weight_to_int4pack(packed_u8, 8)
            else:
                self.packed = torch.ops.aten._convert_weight_to_int4pack_for_cpu(q, 1)
            self.sz = (torch.stack([scale.reshape(n, -1), zero.reshape(n, -1)], -1)
                       .transpose(0, 1).contiguous().to(w.dtype))
        elif recipe in ("float8wo", "float8dq-row"):
            self.q, self.scale = float8(w, True)
        elif recipe in ("float8dq-tensor", "float8dq"):
            self.q, self.scale = float8(w, False)
        else:
            raise UsageError(f"{recipe}: not a recipe replay implements")

    def forward(self, x):
        shape = x.shape
        x = x.reshape(-1, self.k)
        r = self.recipe
        if r == "baseline":
            y = torch.nn.functional.linear(x, self.w)
        elif r == "int8wo":
            if self.cuda or x.shape[0] > INT8_PACKED_MAX_ROWS:
                y = (x @ self.q.to(self.dtype).t()) * self.scale_hp
            else:
                y = torch.ops.aten._weight_int8pack_mm(x, self.q, self.scale_hp)
        elif r == "int8dq":
            xq, xs = int8_rows(x)
            y = (torch._int_mm(xq, self.q.t()).float() * xs * self.scale.t()).to(self.dtype)
        elif r.startswith("int4wo-"):
            if self.cuda:
                y = torch.ops.aten._weight_int4pack_mm(x, self.packed, self.g, self.sz)
            else:
                y = torch.ops.aten._weight_int4pack_mm_for_cpu(x, self.packed, self.g, self.sz)
        elif r == "float8wo":
            y = torch.nn.functional.linear(x, (self.q.float() * self.scale).to(self.dtype))
        elif r == "float8dq-row":
            xq, xs = float8(x, True)
            if self.cuda:
                y = torch._scaled_mm(xq, self.q.t(), scale_a=xs, scale_b=self.scale.t(),
                                     out_dtype=self.dtype)
            else:
                one = torch.ones((), device=x.device)
                y = (torch._scaled_mm(xq, self.q.t(), scale_a=one, scale_b=one,
                                      out_dtype=torch.float32) * xs * self.scale.t()).to(self.dtype)
        else:
            xq, xs = float8(x, False)
            y = torch._scaled_mm(xq, self.q.t(), scale_a=xs, scale_b=self.scale,
                                 out_dtype=self.dtype)
        return y.reshape(*shape[:-1], y.shape[-1])


class Model(torch.nn.Module):
    def __init__(self, model_type, weights, recipe):
        super().__init__()
        self.model_type = model_type
        self.layers = torch.nn.ModuleList([QLinear(recipe, w) for w in weights])

    def forward(self, x):
        t = self.model_type
        if t == "linear":
            return self.layers[0](x)
        if t.startswith("ln_linear_"):
            act = ACTS[t[len("ln_linear_"):]]
            return act(self.layers[0](torch.nn.functional.layer_norm(x, x.shape[-1:], eps=1e-5)))
        b, s, h = x.shape
        hd = h // HEADS

        def heads(t_):
            return t_.reshape(b, s, HEADS, hd).transpose(1, 2)

        normed = torch.nn.functional.rms_norm(x, (h,), eps=1e-6)
        q, k, v = self.layers[0](normed).split(h, -1)
        q, k, v = heads(q), heads(k), heads(v)
        att = ((q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))).softmax(-1)
        x = x + self.layers[1]((att @ v).transpose(1, 2).reshape(b, s, h))
        normed = torch.nn.functional.rms_norm(x, (h,), eps=1e-6)
        return x + self.layers[3](torch.nn.functional.gelu(self.layers[2](normed)))


def weights_and_input(args, dtype, device):
    torch.manual_seed(0)
    t, k, n = args.model_type, args.k, args.n
    if t == "transformer_block":
        if k % HEADS:
            raise UsageError(f"transformer_block: k = {k} is not a multiple of {HEADS} heads")
        shapes = [(3 * k, k), (k, k), (MLP * k, k), (k, MLP * k)]
        x_shape = (args.m, SEQ, k)
    elif t == "linear" or (t.startswith("ln_linear_") and t[len("ln_linear_"):] in ACTS):
        shapes = [(n, k)]
        x_shape = (args.m, k)
    else:
        raise UsageError(f"unknown model type {t}")
    ws = []
    for out, inp in shapes:
        bound = 1.0 / math.sqrt(inp)
        ws.append((torch.rand(out, inp, device=device) * 2 * bound - bound).to(dtype))
    return ws, torch.randn(x_shape, dtype=dtype, device=device)


def time_ms(model, x, threads, warmup, runs, sync):
    def call():
        model(x)
        sync()

    timer = Timer(stmt="call()", globals={"call": call}, num_threads=threads)
    timer.timeit(number=warmup)
    return timer.timeit(number=runs).mean * 1e3


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model-type", required=True)
    p.add_argument("--m", type=int, required=True)
    p.add_argument("--k", type=int, required=True)
    p.add_argument("--n", type=int, required=True)
    p.add_argument("--dtype", default="torch.bfloat16")
    p.add_argument("--device", default="cpu")
    p.add_argument("--recipe", required=True)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--warmup", type=int, default=100)
    p.add_argument("--runs", type=int, default=100)
    p.add_argument("--compile-mode")
    p.add_argument("--profile", help="write a Kineto trace of one eager call here")
    args = p.parse_args(argv)
    try:
        dtype = getattr(torch, args.dtype.split(".")[-1])
        device = torch.device(args.device)
        if device.type == "cuda" and not torch.cuda.is_available():
            raise UsageError("CUDA is unavailable to this Python's torch")
        sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
        ws, x = weights_and_input(args, dtype, device)
        reply = {}
        with torch.no_grad():
            quantized = Model(args.model_type, ws, args.recipe)
            if args.profile:
                from torch.profiler import ProfilerActivity, profile
                make_out_folder(args.profile)
                activities = [ProfilerActivity.CPU]
                if device.type == "cuda":
                    activities.append(ProfilerActivity.CUDA)
                quantized(x)
                sync()
                with profile(activities=activities, record_shapes=True) as prof:
                    quantized(x)
                    sync()
                prof.export_chrome_trace(args.profile)
                reply["profile"] = args.profile
            if args.compile_mode:
                torch._dynamo.reset()
                baseline = Model(args.model_type, ws, "baseline")
                cb = torch.compile(baseline, mode=args.compile_mode, fullgraph=True)
                baseline_ms = time_ms(cb, x, args.threads, args.warmup, args.runs, sync)
                if args.recipe == "baseline":
                    # The baseline row's two models are one: timed once, as the eager columns
                    # are (timed twice, its compiled speedup was the noise between two runs).
                    quantized_ms = baseline_ms
                else:
                    cq = torch.compile(quantized, mode=args.compile_mode, fullgraph=True)
                    quantized_ms = time_ms(cq, x, args.threads, args.warmup, args.runs, sync)
                reply["compiled"] = {"baseline_ms": baseline_ms, "quantized_ms": quantized_ms}
        print(json.dumps(reply))
        return 0
    except UsageError as e:
        print(f"quant_torch.py: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
