#!/usr/bin/env python3
"""The mHC pipeline's stages 1-3 as a TorchScript model (for `replay bench mhc --profiler`).

  mhc_model.py --n-streams 4 --dim 7168 --dtype bfloat16 --out PATH.pt

The seed's module (`mHC_benchmark.py`): RMSNorm over n*D (eps 1e-5, weight ones),
phi_res = Linear(n*D -> n^2, no bias, torch's default init from seed 0), alpha 0.01,
b_res = zeros(n^2), Sinkhorn-Knopp in float32 (max subtracted, exp, 20 x {columns; rows},
+1e-8 on each sum), then einsum("btij,btjc->btic"). Input: x_streams (B, T, n, D). The same
composition as src/suites/mhc/torch_stages.rs; `capture_trace.py` profiles it into the
Kineto trace that `replay classify` and `replay predict` read.
Exit code 2 on bad arguments.
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from script_io import UsageError, make_out_folder  # noqa: E402

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


class MHC(torch.nn.Module):
    def __init__(self, n_streams: int, dim: int, tmax: int = 20, rms_eps: float = 1e-5, alpha: float = 0.01):
        super().__init__()
        self.n = n_streams
        self.tmax = tmax
        self.alpha = alpha
        self.norm = torch.nn.RMSNorm(n_streams * dim, eps=rms_eps)
        self.phi_res = torch.nn.Linear(n_streams * dim, n_streams * n_streams, bias=False)
        self.b_res = torch.nn.Parameter(torch.zeros(n_streams * n_streams))

    def forward(self, x_streams: torch.Tensor) -> torch.Tensor:
        b, t, n, d = x_streams.shape
        h = self.alpha * self.phi_res(self.norm(x_streams.reshape(b, t, n * d))) + self.b_res
        x = h.float().view(b, t, n, n)
        x = (x - x.amax(dim=(-1, -2), keepdim=True)).exp()
        for _ in range(self.tmax):
            x = x / (x.sum(dim=-2, keepdim=True) + 1e-8)
            x = x / (x.sum(dim=-1, keepdim=True) + 1e-8)
        mix = x.to(x_streams.dtype)
        return torch.einsum("btij,btjc->btic", mix, x_streams)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n-streams", type=int, default=4)
    p.add_argument("--dim", type=int, default=7168)
    p.add_argument("--dtype", default="bfloat16", help=", ".join(DTYPES))
    p.add_argument("--out", required=True)
    args = p.parse_args(argv)
    try:
        if args.dtype not in DTYPES:
            raise UsageError(f"--dtype {args.dtype}: accepted {', '.join(DTYPES)}")
        if args.n_streams < 1 or args.dim < 1:
            raise UsageError("--n-streams and --dim must be at least 1")
        make_out_folder(args.out)
        torch.manual_seed(0)
        model = MHC(args.n_streams, args.dim).to(DTYPES[args.dtype]).eval()
        torch.jit.script(model).save(args.out)
    except UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
